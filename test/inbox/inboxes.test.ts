/** Runs the Inbox contract against all three stores: memory, SQLite (a temp file), Redis (a real server). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { memoryInbox } from '../../src/stores/memory.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { redisPerSuite } from '../support/redis-server.js';
import { inboxContract } from './contract.js';

/** ARGV: key prefix, now, then (hash, data) per entry: dead as a claim and a dead failure leave it (src/stores/redis/keys.ts). */
const SEED_DEAD = `local base, now = ARGV[1], ARGV[2]
for i = 3, #ARGV, 2 do
  local id = 'k_' .. ARGV[i]
  redis.call('HSET', base .. id, 'data', ARGV[i + 1], 'attempts', 1, 'error', 'seeded')
  redis.call('ZADD', base .. 'dead', now, id)
  redis.call('SET', base .. 'seen:' .. ARGV[i], 'stored', 'PX', 86400000)
end
return 0`;

/** A dead entry's columns and fields, as a claim and a failure leave them. */
function deadEntry(i: number) {
  const key = `dead-${i}`;
  const rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'app', data: { message: { id: key } } });
  return { key, trigger: 'message_sent', rawBody, receivedAt: Date.now() };
}

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
  cliArgs: (name) => ['--sqlite', join(dir, `${name}.sqlite`)],
  async seedDead(name, count) {
    const db = new Database(join(dir, `${name}.sqlite`), { timeout: 5000 });
    const insert = db.prepare(
      `INSERT INTO inbox (key, trigger, state, due, received_at, attempts, last_error, raw_body) VALUES (?, ?, 3, ?, ?, 1, 'seeded', ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const { key, trigger, rawBody, receivedAt } = deadEntry(i);
        insert.run(key, trigger, receivedAt, receivedAt, rawBody);
      }
    })();
    db.close();
  },
});

const redis = redisPerSuite();
inboxContract('redisInbox', {
  durable: true,
  // A lease that ran out is taken back by the next claim, which asks every pollMs.
  leaseSlackMs: 200,
  open: ({ windowMs, name } = {}) => redisInbox({ url: redis.server.url, prefix: `t-${name ?? ++serial}`, windowMs, pollMs: 20 }),
  cliArgs: (name) => ['--redis', redis.server.url, '--prefix', `t-${name}`],
  /** Dead entries as a claim and a dead failure leave them (job hash, `dead` set), and their markers. */
  async seedDead(name, count) {
    const base = `t-${name}:inbox:`;
    const now = Date.now();
    for (let start = 0; start < count; start += 5000) {
      const args: string[] = [];
      for (let i = start; i < Math.min(count, start + 5000); i++) {
        const { key, trigger, rawBody, receivedAt } = deadEntry(i);
        const hash = sha256Base64(key);
        args.push(hash, JSON.stringify({ key, trigger, rawBody, receivedAt }));
      }
      await redis.client.eval(SEED_DEAD, 0, base, now, ...args);
    }
  },
});
