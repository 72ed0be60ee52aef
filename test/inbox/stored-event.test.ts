/**
 * What the durable inboxes write (src/delivery/stored-event.ts): a Redis job or a SQLite row holds the raw body
 * only (the event is that body parsed), so each put writes about half of what it would with both; a body
 * without JSON text is refused at the put; what an earlier version stored with its event is still read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { InboxClaim, InboxEntry } from '../../src/delivery/port.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { redisPerSuite } from '../support/redis-server.js';

const redis = redisPerSuite();

let serial = 0;
const LEASE = { leaseMs: 30_000, waitMs: 0 };

function entryWithBody(rawBody: string, key = `k-${++serial}`): InboxEntry {
  const event = JSON.parse(rawBody.replace(/^\ufeff/, '')) as InboxEntry['event'];
  return { key, trigger: event.trigger, event, rawBody, receivedAt: Date.now() };
}

async function jobData(prefix: string): Promise<Record<string, unknown>> {
  const [jobKey] = (await redis.client.keys(`${prefix}:inbox:k_*`)).filter((key) => !key.endsWith(':lock'));
  return JSON.parse((await redis.client.hget(jobKey as string, 'data')) as string) as Record<string, unknown>;
}

describe('redisInbox storage', () => {
  it('stores the raw body without the parsed event, and a claim parses it back (byte order mark and all)', async () => {
    const prefix = `s-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix });
    try {
      const rawBody = '\ufeff{ "trigger": "message_sent", "appId": "a", "data": { "message": { "id": "7", "text": "héllo" } } }';
      await inbox.put(entryWithBody(rawBody));
      const data = await jobData(prefix);
      expect(data.rawBody).toBe(rawBody);
      expect(data).not.toHaveProperty('event');
      const claim = (await inbox.claim(LEASE)) as InboxClaim;
      expect(claim.rawBody).toBe(rawBody);
      expect(claim.event).toEqual({ trigger: 'message_sent', appId: 'a', data: { message: { id: '7', text: 'héllo' } } });
      expect((await inbox.list({ state: 'running' }))[0]?.event).toEqual(claim.event);
    } finally {
      await inbox.close();
    }
  });

  it('refuses a put whose raw body is not JSON text (a body parser value that could not be serialized)', async () => {
    const inbox = redisInbox({ url: redis.server.url, prefix: `s-${++serial}` });
    try {
      const event = { trigger: 'message_sent', data: {} } as InboxEntry['event'];
      const put = inbox.put({ key: 'x', trigger: 'message_sent', event, rawBody: '[object Object]', receivedAt: Date.now() });
      await expect(put).rejects.toThrow('The Redis inbox stores an event as its raw body, and this one has no JSON text.');
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    } finally {
      await inbox.close();
    }
  });
});

describe('sqliteInbox storage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stored-event-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const rawBody = '\ufeff{ "trigger": "message_sent", "appId": "a", "data": { "message": { "id": "8" } } }';

  it('stores the raw body without the parsed event, and a claim and a listing parse it back', async () => {
    const path = join(dir, `a-${++serial}.sqlite`);
    const inbox = sqliteInbox({ path });
    try {
      await inbox.put(entryWithBody(rawBody));
      const db = new Database(path, { readonly: true });
      expect(db.prepare('SELECT event, raw_body FROM inbox').get()).toEqual({ event: null, raw_body: rawBody });
      db.close();
      const claim = (await inbox.claim(LEASE)) as InboxClaim;
      expect(claim.event).toEqual({ trigger: 'message_sent', appId: 'a', data: { message: { id: '8' } } });
      expect((await inbox.list({ state: 'running' }))[0]?.event).toEqual(claim.event);
    } finally {
      await inbox.close();
    }
  });

  it('still hands out the event of a row stored with it (by an earlier version)', async () => {
    const path = join(dir, `b-${++serial}.sqlite`);
    const inbox = sqliteInbox({ path });
    try {
      await inbox.put(entryWithBody(rawBody));
      const db = new Database(path);
      db.prepare('UPDATE inbox SET event = ?').run(JSON.stringify({ trigger: 'message_sent', data: { from: 'earlier' } }));
      db.close();
      expect(((await inbox.claim(LEASE)) as InboxClaim).event).toEqual({ trigger: 'message_sent', data: { from: 'earlier' } });
    } finally {
      await inbox.close();
    }
  });

  it('refuses a put whose raw body is not JSON text', async () => {
    const inbox = sqliteInbox({ path: join(dir, `c-${++serial}.sqlite`) });
    try {
      const event = { trigger: 'message_sent', data: {} } as InboxEntry['event'];
      await expect(inbox.put({ key: 'x', trigger: 'message_sent', event, rawBody: '[object Object]', receivedAt: 1 })).rejects.toThrow(
        /SQLite inbox stores an event as its raw body/,
      );
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    } finally {
      await inbox.close();
    }
  });
});
