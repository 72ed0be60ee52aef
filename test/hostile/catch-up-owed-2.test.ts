/**
 * Red team on catch-up's owed windows, second round (src/reconcile/catch-up.ts), on real SQLite files, the
 * local platform and real receivers: the mark a first run that failed sets where its window starts, read by
 * another receiver's run tried again from a start of its own that had no mark either.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { deliveriesEvery, MARK, send } from '../reconcile/catch-up-scenario.js';
import { until } from '../reconcile/scenario.js';
import { sharedInbox } from './catch-up-shared.js';
import { hooked } from './slowed.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-owed-2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const shared = () => sharedInbox(closing, dir);

/**
 * C: a receiver whose store refuses its lock calls (its connection to a network store down) until `up()`, so
 * that its start fails before it walks, and so does each try at its beats; its deliveries (the inbox's other
 * calls) go through, every 100 ms until `stop()`.
 */
async function lockedOut({ receiver, path }: Awaited<ReturnType<typeof shared>>) {
  let lockDown = true;
  const c = receiver(
    hooked(sqliteInbox({ path, pollMs: 10 }), async (name) => {
      if (lockDown && name === 'tryLock') throw new Error('store unreachable');
    }),
  );
  await until(() => c.errors.length === 1, 5000);
  return { ...c, stop: deliveriesEvery(c.webhooks, 100), up: () => void (lockDown = false) };
}

describe('catch-up: owed windows (second round)', () => {
  it("a start with no mark, tried again after another receiver's first run failed, still walks its own window, not from that run's window start", async () => {
    const set = await shared();
    const { platform, inbox, receiver } = set;
    // No mark yet: C's first start looks back a horizon. An event from just before it, the platform gave up on.
    platform.messages.push(send('981', Math.floor(Date.now() / 1000)));
    await sleep(200);
    const c = await lockedOut(set);
    try {
      // Five seconds on, B starts (no mark yet either): its run fails (a wrong key), and sets the mark where
      // its window starts, well after the event. B stops.
      await sleep(5000);
      const b = receiver(undefined, {}, 'wrong');
      await until(() => b.errors.length === 1, 5000);
      expect(b.errors[0]!.code).toBe('catch_up_failed');
      expect(await inbox.mark!(MARK)).toBeGreaterThan(Date.now() - 3000);
      await b.webhooks.close();
      // C's store is back: its next beat tries its start again. The window owed is its own, from before the event.
      c.up();
      await until(() => platform.queries.length === 2, 5000);
      await until(() => c.handled.ids.includes('981'), 5000);
    } finally {
      await c.stop();
    }
    expect(c.errors.every((error) => error.code === 'catch_up_failed' && error.message.includes('store unreachable'))).toBe(true);
  }, 30_000);

  it("a start with no mark, tried again after another receiver's later start walked and ended, still walks its own window", async () => {
    const set = await shared();
    const { platform, receiver } = set;
    platform.messages.push(send('982', Math.floor(Date.now() / 1000)));
    await sleep(200);
    const c = await lockedOut(set);
    try {
      // Five seconds on, E starts (no mark yet): its run walks the horizon before its start, after the event, and ends.
      await sleep(5000);
      const e = receiver();
      await until(() => platform.queries.length === 1, 5000);
      await sleep(500);
      await e.webhooks.close();
      expect(e.errors).toEqual([]);
      // C's store is back: its next beat tries its start again, whose window (the horizon before C's start) E's did not reach.
      c.up();
      await until(() => platform.queries.length === 2, 5000);
      await until(() => c.handled.ids.includes('982'), 5000);
    } finally {
      await c.stop();
    }
  }, 30_000);
});
