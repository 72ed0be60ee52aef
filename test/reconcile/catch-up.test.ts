/**
 * catchUp (issue 35 item 3) against the local platform of test/support/chat-platform.ts, on SQLite: two
 * receivers starting on one inbox recover an outage once between them; a silence longer than the horizon, then
 * a delivery, brings one more catch-up (and a steady stream none); a failing catch-up reaches onError and
 * blocks nothing; the options say what to write when they are wrong. Redis: catch-up-servers.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import { ConfigurationError, createWebhooks, memoryInbox, type WebhookError } from '../../src/index.js';
import { catchUp } from '../../src/reconcile/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { startChatPlatform } from '../support/chat-platform.js';
import { BEGAN, deliveriesEvery, delivery, failedRunTakenUp, MARK, parts, send, twoReceiversStart } from './catch-up-scenario.js';
import { auth, recordHandled, until } from './scenario.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  // Receivers first (they close their inbox handles), then what they used.
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver on a SQLite inbox of its own, with a horizon of 1 s, once its start's run (one walk) raised the mark. */
async function started(name: string) {
  const platform = await startChatPlatform([]);
  closing.push(platform);
  const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
  const inbox = sqliteInbox({ path: join(dir, `${name}-${++serial}.sqlite`), pollMs: 10 });
  const webhooks = createWebhooks({ auth, logger: {}, inbox, catchUp: catchUp({ chat, ...parts, horizonMs: 1000, marginMs: 1000 }) });
  closing.push(webhooks);
  const handled = recordHandled(webhooks);
  await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
  expect(platform.queries.length).toBe(1);
  return { platform, inbox, webhooks, handled, startMark: (await inbox.mark!(MARK))! };
}

describe('catchUp', () => {
  it('two receivers starting on one SQLite inbox recover the outage once between them, and raise the mark', async () => {
    const path = join(dir, `shared-${++serial}.sqlite`);
    await twoReceiversStart(() => sqliteInbox({ path, pollMs: 10 }), closing);
  }, 30_000);

  it('a silence longer than the horizon, then a delivery: one more catch-up recovers what came in between', async () => {
    const { platform, inbox, webhooks, handled, startMark } = await started('silence');

    // Deliveries every 100 ms for longer than the horizon (a horizon of 1 s, so that a loaded machine's pauses
    // stay well under it): no catch-up, however long the stream goes on.
    for (let i = 0; i < 14; i++) {
      expect((await webhooks.handle(delivery(`1${String(i).padStart(2, '0')}`))).status).toBe(200);
      await sleep(100);
    }
    await until(() => handled.ids.length === 14);
    expect(platform.queries.length).toBe(1);
    // ...but the mark follows the stream (written by a call queued behind the deliveries: polled).
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(startMark);
    const streamMark = await inbox.mark!(MARK);
    // The outage: two events the platform gave up on while nothing arrived.
    const second = Math.floor(Date.now() / 1000);
    platform.messages.push(send('201', second), send('202', second));
    await sleep(1300);
    expect((await webhooks.handle(delivery('300'))).status).toBe(200);
    await until(() => handled.ids.includes('201') && handled.ids.includes('202') && handled.ids.includes('300'));
    expect(platform.queries.length).toBe(2);
    // From the last delivery before the silence, minus the margin: the window held only the two.
    expect(Number(platform.queries[1]!.get('fromTimestamp'))).toBeGreaterThanOrEqual(Math.floor((streamMark! - 1000) / 1000) - 1);
    expect(handled.ids.filter((id) => id === '201' || id === '202').length).toBe(2);
    // The run raises the mark after its redeliveries were handled, not before: polled.
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(streamMark!);
  }, 20_000);

  it('a run that failed in a receiver that then stopped: another one, hearing deliveries, takes up its window', async () => {
    const path = join(dir, `failed-${++serial}.sqlite`);
    await failedRunTakenUp(() => sqliteInbox({ path, pollMs: 10 }), closing);
  }, 30_000);

  it("while another receiver's run holds the lock, beats neither raise the mark nor walk; freed unended, the next beat walks", async () => {
    const { platform, inbox, webhooks, handled, startMark } = await started('held');
    // Another receiver's run begins: it holds the lock and has recorded its start.
    expect(await inbox.tryLock!(MARK, 'another receiver', 60_000)).toBe(true);
    await inbox.setMark!(BEGAN, Date.now());
    const stop = deliveriesEvery(webhooks, 100);
    try {
      await sleep(2300); // two beats or more
      expect(platform.queries.length).toBe(1);
      expect(await inbox.mark!(MARK)).toBe(startMark);
      // It ends without raising the mark (it failed, and its receiver stopped): its window is still owed.
      platform.messages.push(send('801', Math.floor(Date.now() / 1000)));
      await inbox.unlock!(MARK, 'another receiver');
      await until(() => handled.ids.includes('801'), 3000);
    } finally {
      await stop();
    }
    expect(platform.queries.length).toBe(2);
    expect(Number(platform.queries[1]!.get('fromTimestamp'))).toBe(Math.floor((startMark - 1000) / 1000));
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThanOrEqual((await inbox.mark!(BEGAN))!);
  }, 20_000);

  it("a run that finds another receiver's beat holding the lock waits for it, then walks its own window", async () => {
    const { platform, inbox, webhooks, handled } = await started('beat');
    expect((await webhooks.handle(delivery('1'))).status).toBe(200);
    // A silence longer than the horizon, with an event lost in it.
    platform.messages.push(send('2', Math.floor(Date.now() / 1000)));
    await sleep(1200);
    // Another receiver's beat holds the lock (nothing owed: the latest run ended) as deliveries resume here.
    expect(await inbox.tryLock!(MARK, 'a beat', 60_000)).toBe(true);
    expect((await webhooks.handle(delivery('3'))).status).toBe(200);
    await sleep(300);
    expect(platform.queries.length).toBe(1);
    await inbox.unlock!(MARK, 'a beat');
    await until(() => handled.ids.includes('2'));
    expect(platform.queries.length).toBe(2);
  }, 20_000);

  it("keeps the lock and marks of two apps apart, even when a colon in their ids would make the names meet", async () => {
    const platform = await startChatPlatform([]);
    closing.push(platform);
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    const path = join(dir, `scopes-${++serial}.sqlite`);
    const inbox = sqliteInbox({ path });
    closing.push(inbox);
    const receiver = (appId: string, webhook: string) => createWebhooks({ auth, logger: {}, inbox: sqliteInbox({ path, pollMs: 10 }), closeInbox: true, catchUp: catchUp({ chat, appId, region: 'eu', webhook }) });
    // The first app's start leaves its mark.
    closing.push(receiver('x', 'y:z'));
    await until(() => platform.queries.length === 1);
    await expect.poll(() => inbox.mark!('catch-up:x:y%3Az')).toBeGreaterThan(0);
    // The second app has no mark of its own: its first start looks back its horizon and margin (2 min), not
    // the margin (1 min) before the first app's mark.
    const before = Date.now();
    closing.push(receiver('x:y', 'z'));
    await until(() => platform.queries.length === 2);
    expect(Number(platform.queries[1]!.get('fromTimestamp'))).toBeLessThanOrEqual(Math.floor((before - 100_000) / 1000));
    await expect.poll(() => inbox.mark!('catch-up:x%3Ay:z')).toBeGreaterThan(0);
  });

  it('a catch-up that fails reaches onError, is tried again later, and never blocks deliveries', async () => {
    const platform = await startChatPlatform([]);
    closing.push(platform);
    // A wrong key: every walk is refused 401.
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: 'wrong', retry: false });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: sqliteInbox({ path: join(dir, `fail-${++serial}.sqlite`), pollMs: 10 }), catchUp: catchUp({ chat, ...parts, horizonMs: 1000 }) });
    closing.push(webhooks);
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const handled = recordHandled(webhooks);
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ code: 'catch_up_failed', status: undefined });
    expect(errors[0]!.message).toContain('401');
    expect((await webhooks.handle(delivery('1'))).status).toBe(200);
    await until(() => handled.ids.includes('1'));
    // A delivery after the horizon: the failed run is tried again (and fails again, reported again).
    await sleep(1100);
    expect((await webhooks.handle(delivery('2'))).status).toBe(200);
    await until(() => errors.length === 2 && handled.ids.includes('2'));
    expect(errors.every((error) => error.code === 'catch_up_failed')).toBe(true);
    expect(platform.queries.length).toBe(2);
    expect((await webhooks.health()).ok).toBe(true);
  }, 20_000);

  it('without onError, a failed catch-up goes to the logger', async () => {
    const logged: string[] = [];
    const chat = createChatClient({ baseUrl: 'http://127.0.0.1:9/v3', apiKey: 'k', retry: false });
    const webhooks = createWebhooks({
      auth, inbox: sqliteInbox({ path: join(dir, `log-${++serial}.sqlite`) }), catchUp: catchUp({ chat, ...parts }),
      logger: { error: (fields: { code?: string }) => void logged.push(String(fields.code)) },
    });
    closing.push(webhooks);
    await until(() => logged.length === 1);
    expect(logged).toEqual(['catch_up_failed']);
  });

  it('takes the plain form catchUp: { chat, webhook }, loading reconcile at its first call, and recovers on start', async () => {
    const sentAt = Math.floor(Date.now() / 1000) - 10;
    const platform = await startChatPlatform([send('7001', sentAt), send('7002', sentAt + 1)]);
    closing.push(platform);
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    const inbox = sqliteInbox({ path: join(dir, `plain-${++serial}.sqlite`), pollMs: 10 });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, catchUp: { chat, ...parts, horizonMs: 60_000 } });
    closing.push(webhooks);
    const handled = recordHandled(webhooks);
    await until(() => handled.ids.length === 2);
    expect([...handled.ids].sort()).toEqual(['7001', '7002']);
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
  });

  it('is refused at createWebhooks when the plain form is wrong, without a durable inbox, or misspelled', () => {
    const chat = createChatClient({ appId: 'app1', region: 'eu', apiKey: 'k' });
    const inbox = sqliteInbox({ path: join(dir, `config-${++serial}.sqlite`) });
    closing.push(inbox);
    expect(() => createWebhooks({ auth, inbox, catchUp: { chat: {} as never, webhook: 'wh_main' } })).toThrow('`catchUp.chat` must be a client from createChatClient');
    expect(() => createWebhooks({ auth, inbox, catchUp: { chat, webhook: '' } })).toThrow("`catchUp.webhook` must be the webhook's id");
    expect(() => createWebhooks({ auth, catchUp: { chat, webhook: 'wh_main' } })).toThrow(/needs a durable `inbox`/);
    expect(() => createWebhooks({ auth, catchUp: catchUp({ chat, webhook: 'wh_main' }) })).toThrow(/needs a durable `inbox`/);
    expect(() => createWebhooks({ auth, inbox: memoryInbox(), catchUp: catchUp({ chat, webhook: 'wh_main' }) })).toThrow(/needs a durable `inbox`/);
    // A durable inbox without the lock and marks (a receive-only queue, say): said so, by its kind.
    const { tryLock: _, ...withoutLock } = Object.fromEntries(['kind', 'durable', 'put', 'claim', 'mark', 'setMark', 'unlock', 'tryLock'].map((name) => [name, (inbox as never)[name]]));
    expect(() => createWebhooks({ auth, inbox: withoutLock as never, catchUp: catchUp({ chat, webhook: 'wh_main' }) })).toThrow('the sqlite inbox has none');
    expect(() => createWebhooks({ auth, inbox, catchup: catchUp({ chat, webhook: 'wh_main' }) } as never)).toThrow('Did you mean "catchUp"');
  });

  it('takes appId and region from the client\'s host, or asks for them', () => {
    expect(catchUp({ chat: createChatClient({ appId: 'app1', region: 'eu', apiKey: 'k' }), webhook: 'wh_main' }).horizonMs).toBe(60_000);
    const local = createChatClient({ baseUrl: 'http://127.0.0.1:1/v3', apiKey: 'k' });
    expect(() => catchUp({ chat: local, webhook: 'wh_main' })).toThrow(/appId/);
    expect(() => catchUp({ chat: local, ...parts, horizonMs: 0 })).toThrow(/horizonMs/);
    expect(() => catchUp({ chat: local, ...parts, webhook: 'wh_\uD800' })).toThrow('webhook holds half of a UTF-16 surrogate pair');
  });
});
