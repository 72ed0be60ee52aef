/**
 * Red team on catch-up's lock (src/reconcile/catch-up.ts), third round, on real SQLite files, the local
 * platform and real receivers: a renewal of the lock still on its way when a run frees it, and a failed run
 * tried again after another receiver's run walked its window.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Inbox, type WebhookError } from '../../src/index.js';
import { catchUp, type CatchUpOptions } from '../../src/reconcile/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { startChatPlatform } from '../support/chat-platform.js';
import { deliveriesEvery, MARK, parts } from '../reconcile/catch-up-scenario.js';
import { auth, recordHandled, until } from '../reconcile/scenario.js';
import { slowed } from './slowed.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-lock-2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const HORIZON = { horizonMs: 1000, marginMs: 1000 };

async function shared() {
  const platform = await startChatPlatform([]);
  closing.push(platform);
  const path = join(dir, `lock-${++serial}.sqlite`);
  const inbox = sqliteInbox({ path, pollMs: 10 });
  closing.push(inbox);
  const receiver = (own: Inbox = sqliteInbox({ path, pollMs: 10 }), extra: Partial<CatchUpOptions> = {}, apiKey = platform.apiKey) => {
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey, retry: false });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: own, closeInbox: true, catchUp: catchUp({ chat, ...parts, ...HORIZON, ...extra }) });
    closing.push(webhooks);
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    return { webhooks, errors, handled: recordHandled(webhooks) };
  };
  return { platform, path, inbox, receiver };
}

/** A promise and its resolve. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * `inbox` with a hook around each call: `before(name, args)` may wait (a store's round trip) or throw (a store
 * failing); the call is made once it settles, then the function it returned (if any) is called.
 */
function hooked(inbox: Inbox, before: (name: string, args: unknown[]) => Promise<(() => void) | void>): Inbox {
  return new Proxy(inbox, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const after = await before(String(key), args);
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        after?.();
        return result;
      };
    },
  });
}

describe('catch-up: the lock, third round', () => {
  it("a renewal still on its way when a run ends does not take the lock again after its unlock (another receiver's start is not refused)", async () => {
    const { platform, path, inbox, receiver } = await shared();
    const issued = gate();
    const delivered = gate();
    const landed = gate();
    let tries = 0;
    // B's start takes the lock (its first tryLock); its walk ends only once a renewal (its second) is on its
    // way, and that renewal reaches the store only when the test lets it, after B's run is over.
    const b = receiver(
      hooked(
        sqliteInbox({ path, pollMs: 10 }),
        async (name, args) => {
          if (name === 'tryLock' && ++tries === 2) {
            issued.open();
            await delivered.promise;
            return landed.open;
          }
          if (name === 'setMark' && args[0] === MARK) await issued.promise;
        },
      ),
      { lockMs: 3000 },
    );
    await expect.poll(() => inbox.mark!(MARK), { timeout: 5000 }).toBeGreaterThan(0);
    // Long enough for B's unlock to follow its raised mark (a store call, no waits).
    await sleep(300);
    delivered.open();
    await landed.promise;
    // C starts: the lock must be free. Held by B's late renewal, C would wait its second, then fail.
    const c = receiver();
    await until(() => platform.queries.length === 2 || c.errors.length > 0, 5000);
    expect(c.errors).toEqual([]);
    expect(b.errors).toEqual([]);
  }, 20_000);

  it("a failed run tried again after another receiver's run walked its window starts from that run's mark, not its own stale point", async () => {
    const { platform, path, inbox, receiver } = await shared();
    const markAt = Date.now() - 300_000;
    await inbox.setMark!(MARK, markAt);
    // B's start walks the five minutes, then the store fails as it raises the mark: the run failed, owed.
    // B's try again (at its first beat) takes a while to reach the lock, so that A's start walks first.
    let failMark = true;
    let slowLock = false;
    const b = receiver(
      slowed(sqliteInbox({ path, pollMs: 10 }), (name, args) => {
        if (name === 'setMark' && args[0] === MARK && failMark) {
          failMark = false;
          slowLock = true;
          throw new Error('store unreachable');
        }
        if (name === 'tryLock' && slowLock) return (slowLock = false), 2500;
        return 0;
      }),
    );
    const stop = deliveriesEvery(b.webhooks, 100);
    try {
      await until(() => b.errors.length === 1, 5000);
      expect(b.errors[0]!.message).toContain('store unreachable');
      // A starts from the same mark (B's run did not raise it), walks the five minutes again and raises the mark.
      receiver();
      await until(() => platform.queries.length === 2, 5000);
      await expect.poll(() => inbox.mark!(MARK), { timeout: 5000 }).toBeGreaterThan(markAt);
      // B's try again walks now, from A's mark (the margin before it), not the five minutes a third time.
      await until(() => platform.queries.length === 3, 8000);
    } finally {
      await stop();
    }
    const froms = platform.queries.map((query) => Number(query.get('fromTimestamp')));
    expect(froms.slice(0, 2)).toEqual([Math.floor((markAt - 1000) / 1000), Math.floor((markAt - 1000) / 1000)]);
    expect(froms[2]).toBeGreaterThan(Math.floor(markAt / 1000) + 200);
  }, 30_000);
});
