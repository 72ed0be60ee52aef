/**
 * Red team on catch-up's coordination (src/reconcile/catch-up.ts, src/receive/catch-up.ts), on real SQLite
 * files, the local platform and real receivers. Receiver A hears deliveries all along (a tenth of the horizon
 * apart), so only its beats can take up a window another receiver's run left owed; what the attacks vary is
 * how that run began, ended or was cut off.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type WebhookError } from '../../src/index.js';
import { catchUp } from '../../src/reconcile/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { startChatPlatform } from '../support/chat-platform.js';
import { BEGAN, deliveriesEvery, delivery, MARK, parts, send } from '../reconcile/catch-up-scenario.js';
import { auth, recordHandled, until } from '../reconcile/scenario.js';
import { HORIZON, sharedInbox } from './catch-up-shared.js';
import { slowed } from './slowed.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-races-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Receiver A on a shared inbox (catch-up-shared.ts), started (its mark written), its deliveries flowing every 100 ms. */
async function aFlowing() {
  const set = await sharedInbox(closing, dir);
  const a = set.receiver();
  await expect.poll(() => set.inbox.mark!(MARK)).toBeGreaterThan(0);
  const startMark = (await set.inbox.mark!(MARK))!;
  return { ...set, a: a.webhooks, handled: a.handled, startMark, stop: deliveriesEvery(a.webhooks, 100) };
}

describe('catch-up: an owed window is not lost', () => {
  it("a beat that reads the marks after another receiver's run took the lock, but before it recorded its start, does not raise the mark past it", async () => {
    const { platform, path, handled, receiver, stop } = await aFlowing();
    try {
      const second = Math.floor(Date.now() / 1000);
      platform.messages.push(send('601', second), send('602', second));
      // B's record that its run began takes 1.5 s to land (A beats once a second meanwhile); then its walk is refused.
      const b = receiver(slowed(sqliteInbox({ path, pollMs: 10 }), (name, args) => (name === 'setMark' && args[0] === BEGAN ? 1500 : 0)), {}, 'wrong');
      await until(() => b.errors.length === 1);
      await b.webhooks.close();
      await until(() => handled.ids.includes('601') && handled.ids.includes('602'), 5000);
    } finally {
      await stop();
    }
  }, 30_000);
});

describe('catch-up: a run cut off, a beat that fails', () => {
  it("close() stops another receiver's run while it waits out a 429: its window is owed, and A's next beat walks it", async () => {
    const { platform, handled, receiver, stop } = await aFlowing();
    try {
      const second = Math.floor(Date.now() / 1000);
      platform.messages.push(send('611', second), send('612', second));
      // B's walk is told to wait 5 s; B closes meanwhile, its run begun and not ended.
      platform.throttle(1, 5);
      const b = receiver();
      await until(() => platform.queries.length === 2);
      const closed = Date.now();
      await b.webhooks.close();
      expect(Date.now() - closed).toBeLessThan(1000);
      await until(() => handled.ids.includes('611') && handled.ids.includes('612'), 5000);
      expect(platform.queries.length).toBe(3);
    } finally {
      await stop();
    }
  }, 30_000);

  it('an onError handler that never settles stops neither close() nor the catch-ups after it', async () => {
    const platform = await startChatPlatform([]);
    closing.push(platform);
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: 'wrong', retry: false });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: sqliteInbox({ path: join(dir, `hang-${++serial}.sqlite`), pollMs: 10 }), catchUp: catchUp({ chat, ...parts, ...HORIZON }) });
    // Closed by the test itself (afterEach would hang with it if it failed).
    const errors: WebhookError[] = [];
    // An alerting call that hangs (its service down, no timeout).
    webhooks.onError((error) => new Promise<void>(() => void errors.push(error)));
    await until(() => errors.length === 1);
    // After a silence, the run is tried again: it must not wait behind the first report.
    await sleep(1100);
    expect((await webhooks.handle(delivery('1'))).status).toBe(200);
    await until(() => errors.length === 2, 3000);
    const closed = webhooks.close({ timeoutMs: 500 });
    expect(await Promise.race([closed.then(() => 'closed'), sleep(3000).then(() => 'hung')])).toBe('closed');
  }, 20_000);

  it("a beat whose store reads fail reaches onError as catch_up_failed; deliveries are answered 200 all along", async () => {
    const platform = await startChatPlatform([]);
    closing.push(platform);
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    let failing = false;
    const inbox = slowed(sqliteInbox({ path: join(dir, `down-${++serial}.sqlite`), pollMs: 10 }), (name) => {
      if (failing && (name === 'mark' || name === 'tryLock')) throw new Error('coordination store unreachable');
      return 0;
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, catchUp: catchUp({ chat, ...parts, ...HORIZON }) });
    closing.push(webhooks);
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const handled = recordHandled(webhooks);
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
    failing = true;
    for (let i = 0; i < 25; i++) {
      expect((await webhooks.handle(delivery(`5${i}`))).status).toBe(200);
      await sleep(100);
    }
    await until(() => handled.ids.length === 25 && errors.length >= 2);
    expect(errors.map((error) => error.code)).toEqual(errors.map(() => 'catch_up_failed'));
    expect(errors[0]!.message).toContain('coordination store unreachable');
  }, 20_000);
});
