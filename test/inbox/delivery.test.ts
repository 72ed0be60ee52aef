/**
 * End to end on the durable stores: receivers with `consume: false` store through `webhooks.handle`, and a
 * worker with its own connection to the same store (as another process would have) runs each event once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebhooks, createWorker, type Inbox } from '../../src/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { redisPerSuite } from '../support/redis-server.js';

const auth = { username: 'platform', password: 's3cret' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const body = (id: number) => JSON.stringify(createTestEvent('message_sent', { data: { message: { id: String(id) } } }));

const dir = mkdtempSync(join(tmpdir(), 'inbox-e2e-'));
const redis = redisPerSuite();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: Array<[string, () => Inbox]> = [
  ['sqlite', () => sqliteInbox({ path: join(dir, 'e2e.sqlite'), pollMs: 20 })],
  ['redis', () => redisInbox({ url: redis.server.url, prefix: 'e2e', pollMs: 20 })],
];

describe.each(stores)('%s: two receivers and a worker on one store', (_name, open) => {
  it('answers every delivery 200, recognises repeats across receivers, and handles each event once', async () => {
    const inboxes = [open(), open(), open()];
    const [a, b, forWorker] = inboxes as [Inbox, Inbox, Inbox];
    const receivers = [a, b].map((inbox) => createWebhooks({ auth, inbox, consume: false, logger: {} }));
    const handled = new Map<string, number>();
    const worker = createWorker({ inbox: forWorker, concurrency: 4 })
      .on('message_sent', (event) => void handled.set(event.data.message.id, (handled.get(event.data.message.id) ?? 0) + 1))
      .start();

    const sends = Array.from({ length: 40 }, (_, i) => receivers[i % 2]!.handle(buildRequest(body(i % 30), { auth })));
    const statuses = (await Promise.all(sends)).map((response) => response.status);
    expect(statuses.every((status) => status === 200)).toBe(true);

    const deadline = Date.now() + 10_000;
    while ((await forWorker.stats()).done < 30 && Date.now() < deadline) await sleep(20);
    expect(await forWorker.stats()).toMatchObject({ pending: 0, running: 0, done: 30, dead: 0 });
    expect(handled.size).toBe(30);
    expect([...handled.values()].every((count) => count === 1)).toBe(true);

    await worker.close();
    await Promise.all(receivers.map((webhooks) => webhooks.close()));
    await Promise.all(inboxes.map((inbox) => inbox.close()));
  });
});
