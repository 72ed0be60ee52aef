/**
 * Red team on catch-up's lock (src/reconcile/catch-up.ts), second and third rounds, on real SQLite files, the
 * local platform and real receivers: a run that takes the lock only after another run ended, a lock held past
 * the run's wait by a holder that never began a run, a store that fails the unlock of a run that leaves, a
 * renewal still on its way when a run frees the lock, a failed run tried again after another receiver's run
 * walked its window, and a resumed run that starts past a window left owed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { BEGAN, deliveriesEvery, delivery, MARK, send } from '../reconcile/catch-up-scenario.js';
import { until } from '../reconcile/scenario.js';
import { sharedInbox } from './catch-up-shared.js';
import { hooked, slowed } from './slowed.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const shared = () => sharedInbox(closing, dir);

/** A promise and its resolve. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe('catch-up: the lock', () => {
  it("a start that takes the lock after another receiver's run ended walks from that run's mark, not its own stale one", async () => {
    const { platform, path, inbox, receiver } = await shared();
    const markAt = Date.now() - 300_000;
    await inbox.setMark!(MARK, markAt);
    // A starts and walks from the mark. B read the same mark, but its first try for the lock lands after A's run.
    let first = true;
    receiver();
    receiver(slowed(sqliteInbox({ path, pollMs: 10 }), (name) => (name === 'tryLock' && first ? ((first = false), 1500) : 0)));
    await until(() => platform.queries.length === 2, 5000);
    const froms = platform.queries.map((query) => Number(query.get('fromTimestamp')));
    expect(froms[0]).toBe(Math.floor((markAt - 1000) / 1000));
    // B's walk starts from A's mark (the margin before it), not from the five minutes ago A already walked.
    expect(froms[1]).toBeGreaterThan(Math.floor(markAt / 1000) + 200);
  }, 20_000);

  it('a lock held past the wait by a holder that began no run fails the run (catch_up_failed), and the next delivery walks its window', async () => {
    const { platform, inbox, receiver } = await shared();
    // A receiver died holding the lock before it recorded a run: nothing covers this start's window.
    expect(await inbox.tryLock!(MARK, 'a receiver that died', 60_000)).toBe(true);
    platform.messages.push(send('901', Math.floor(Date.now() / 1000)));
    const { webhooks, errors, handled } = receiver();
    await until(() => errors.length === 1, 5000);
    expect(errors[0]!.code).toBe('catch_up_failed');
    expect(errors[0]!.message).toContain('lock');
    const failedAt = Date.now();
    expect(platform.queries.length).toBe(0);
    // Its lease runs out (freed here); as deliveries come, the run is tried again, from the same point.
    await inbox.unlock!(MARK, 'a receiver that died');
    const stop = deliveriesEvery(webhooks, 100);
    try {
      await until(() => handled.ids.includes('901'), 5000);
    } finally {
      await stop();
    }
    expect(platform.queries.length).toBe(1);
    expect(Number(platform.queries[0]!.get('fromTimestamp'))).toBeLessThanOrEqual(Math.floor((failedAt - 2000) / 1000));
  }, 20_000);

  it('a run that leaves because another began and ended while it waited reports nothing when the store fails its unlock', async () => {
    const { platform, path, inbox, receiver } = await shared();
    let unlockFails = false;
    const { webhooks, errors, handled } = receiver(
      slowed(sqliteInbox({ path, pollMs: 10 }), (name) => {
        if (unlockFails && name === 'unlock') throw new Error('store unreachable');
        return 0;
      }),
    );
    await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
    expect((await webhooks.handle(delivery('1'))).status).toBe(200);
    await until(() => handled.ids.includes('1'));
    await sleep(1200);
    // A beat of another receiver holds the lock as deliveries resume here after the silence: the run waits.
    expect(await inbox.tryLock!(MARK, 'a beat', 60_000)).toBe(true);
    expect((await webhooks.handle(delivery('2'))).status).toBe(200);
    await sleep(300);
    // Meanwhile another run begins and ends (it covered this window), and the store starts failing unlocks.
    const now = Date.now();
    await inbox.setMark!(BEGAN, now);
    await inbox.setMark!(MARK, now);
    unlockFails = true;
    await inbox.unlock!(MARK, 'a beat');
    await sleep(500);
    expect(platform.queries.length).toBe(1);
    expect(errors).toEqual([]);
  }, 20_000);
});

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

  it("a resumed run whose start is past a window another receiver's run left owed walks that window too, before it raises the mark", async () => {
    // A horizon far over the margin: a resumed run's own window then starts well after the last beat.
    const { platform, receiver } = await shared();
    const a = receiver(undefined, { horizonMs: 5000, marginMs: 1000 });
    await until(() => platform.queries.length === 1, 5000);
    await sleep(300);
    // The outage B started after: one event the platform gave up on. B's start is refused, and B stops.
    platform.messages.push(send('951', Math.floor(Date.now() / 1000)));
    const b = receiver(undefined, {}, 'wrong');
    await until(() => b.errors.length === 1, 5000);
    await b.webhooks.close();
    // A hears deliveries for 2.5 s (no beat: under its horizon), then nothing for longer than the horizon: its
    // resumed run's own window starts 1.5 s or more after the event.
    for (let i = 0; i < 25; i++) {
      expect((await a.webhooks.handle(delivery(`96${i}`))).status).toBe(200);
      await sleep(100);
    }
    await sleep(5300);
    expect((await a.webhooks.handle(delivery('970'))).status).toBe(200);
    // A's resumed run walks from its last delivery; B's window, owed, must be walked with it.
    await until(() => platform.queries.length === 3, 5000);
    await until(() => a.handled.ids.includes('951'), 5000);
    expect(a.errors).toEqual([]);
  }, 30_000);
});
