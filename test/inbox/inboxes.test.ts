/** Runs the Inbox contract against all three stores: memory, SQLite (a temp file), Redis (a real server). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { memoryInbox } from '../../src/inbox/memory.js';
import { redisInbox } from '../../src/inbox/redis.js';
import { sqliteInbox } from '../../src/inbox/sqlite.js';
import { redisPerSuite } from '../support/redis-server.js';
import { inboxContract } from './contract.js';

let serial = 0;

inboxContract('memoryInbox', {
  durable: false,
  leaseSlackMs: 0,
  open: ({ windowMs } = {}) => memoryInbox({ windowMs }),
});

const dir = mkdtempSync(join(tmpdir(), 'inbox-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
inboxContract('sqliteInbox', {
  durable: true,
  leaseSlackMs: 200,
  open: ({ windowMs, name } = {}) => sqliteInbox({ path: join(dir, `${name ?? `db-${++serial}`}.sqlite`), windowMs }),
});

const redis = redisPerSuite();
inboxContract('redisInbox', {
  durable: true,
  // BullMQ's stalled checker runs every leaseMs/2 (at least 100 ms) and needs two passes to move a job back.
  leaseSlackMs: 1000,
  open: ({ windowMs, name } = {}) => redisInbox({ url: redis.server.url, prefix: `t-${name ?? ++serial}`, windowMs, pollMs: 20 }),
});
