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
import { createWebhooks, type Inbox, type WebhookError, type Webhooks } from '../../src/index.js';
import { catchUp } from '../../src/reconcile/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { startChatPlatform, type ChatPlatform } from '../support/chat-platform.js';
import { BEGAN, delivery, MARK, parts, send } from '../reconcile/catch-up-scenario.js';
import { auth, recordHandled, until, type Handled } from '../reconcile/scenario.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-races-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const HORIZON = { horizonMs: 1000, marginMs: 1000 };

/** The same inbox with one operation slowed down, as a network store's round-trip (or a pause) would. */
function slowed(inbox: Inbox, slow: (name: string, args: unknown[]) => number): Inbox {
  return new Proxy(inbox, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const ms = slow(String(key), args);
        if (ms > 0) await sleep(ms);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

interface Flowing {
  platform: ChatPlatform;
  path: string;
  a: Webhooks;
  handled: Handled;
  startMark: number;
  /** Stops A's deliveries; rejects if one was not answered 200. */
  stop(): Promise<void>;
  receiver(apiKey: string, inbox?: Inbox): Webhooks;
}

/** Receiver A, started (its mark written), its deliveries flowing every 100 ms. */
async function aFlowing(): Promise<Flowing> {
  const platform = await startChatPlatform([]);
  closing.push(platform);
  const path = join(dir, `races-${++serial}.sqlite`);
  const inbox = sqliteInbox({ path, pollMs: 10 });
  closing.push(inbox);
  const receiver = (apiKey: string, own: Inbox = sqliteInbox({ path, pollMs: 10 })) => {
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey, retry: false });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: own, closeInbox: true, catchUp: catchUp({ chat, ...parts, ...HORIZON }) });
    closing.push(webhooks);
    return webhooks;
  };
  const a = receiver(platform.apiKey);
  const handled = recordHandled(a);
  await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
  const startMark = (await inbox.mark!(MARK))!;
  let flowing = true;
  const stream = (async () => {
    for (let i = 0; flowing; i++) {
      expect((await a.handle(delivery(`7${i}`))).status).toBe(200);
      await sleep(100);
    }
  })();
  stream.catch(() => undefined);
  return { platform, path, a, handled, startMark, receiver, stop: async () => ((flowing = false), await stream) };
}

describe('catch-up: an owed window is not lost', () => {
  it("a beat that reads the marks after another receiver's run took the lock, but before it recorded its start, does not raise the mark past it", async () => {
    const { platform, path, handled, receiver, stop } = await aFlowing();
    try {
      const second = Math.floor(Date.now() / 1000);
      platform.messages.push(send('601', second), send('602', second));
      // B's record that its run began takes 1.5 s to land (A beats once a second meanwhile); then its walk is refused.
      const b = receiver('wrong', slowed(sqliteInbox({ path, pollMs: 10 }), (name, args) => (name === 'setMark' && args[0] === BEGAN ? 1500 : 0)));
      const errors: WebhookError[] = [];
      b.onError((error) => void errors.push(error));
      await until(() => errors.length === 1);
      await b.close();
      await until(() => handled.ids.includes('601') && handled.ids.includes('602'), 5000);
    } finally {
      await stop();
    }
  }, 30_000);
});
