/**
 * Red team on catch-up's owed windows (src/reconcile/catch-up.ts), on real SQLite files, the local platform and
 * real receivers: a run that leaves the lock to another receiver's run in progress, when that run's window ends
 * (at its start) well before this one's; a first start (no mark yet) that failed, tried again at each beat, then
 * stopped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { BEGAN, deliveriesEvery, MARK, send } from '../reconcile/catch-up-scenario.js';
import { until } from '../reconcile/scenario.js';
import { sharedInbox } from './catch-up-shared.js';
import { slowed } from './slowed.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});
const dir = mkdtempSync(join(tmpdir(), 'catch-up-owed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const shared = () => sharedInbox(closing, dir);

describe('catch-up: owed windows', () => {
  it("a resumed run that finds another receiver's run in progress still walks the part of its silence after that run's start", async () => {
    const { platform, path, inbox, receiver } = await shared();
    // C starts (nothing to walk), then hears deliveries.
    const c = receiver();
    await expect.poll(() => inbox.mark!(MARK), { timeout: 5000 }).toBeGreaterThan(0);
    const stopFirst = deliveriesEvery(c.webhooks, 100);
    await sleep(500);
    await stopFirst();
    // C's silence (an outage) begins. D starts in it: its start's walk has a backlog to redeliver (eight
    // batches of 64), and its store takes 0.8 s over each batch's writes, so its run holds the lock for 6 s or more.
    const second = Math.floor(Date.now() / 1000); // in D's window: after the mark less the margin
    const backlog = Array.from({ length: 8 * 64 }, (_, i) => String(1000 + i));
    for (const id of backlog) platform.messages.push(send(id, second));
    const d = receiver(slowed(sqliteInbox({ path, pollMs: 10 }), (name) => (name === 'put' ? 800 : 0)));
    await expect.poll(() => inbox.mark!(BEGAN), { timeout: 5000 }).toBeGreaterThan((await inbox.mark!(MARK))!);
    const dBegan = (await inbox.mark!(BEGAN))!;
    // Still in the outage, well after D's run began (its window ends there): one event, the platform gave up on.
    await sleep(2000);
    platform.messages.push(send('999', Math.floor(Date.now() / 1000)));
    expect(Math.floor(Date.now() / 1000) * 1000).toBeGreaterThan(dBegan);
    await sleep(2000);
    // The outage ends: C hears deliveries again (its silence over 4 s, past the horizon) while D's run still walks
    // (it has not raised the mark): C's resumed run finds the lock held by a run in progress and leaves.
    expect(await inbox.mark!(MARK)).toBeLessThan(dBegan);
    const stop = deliveriesEvery(c.webhooks, 100);
    try {
      // Once D's run ends (its mark at its start), the event after it must still be walked: by C, whose silence it fell in.
      await until(() => c.handled.ids.includes('999') || d.handled.ids.includes('999'), 25_000);
    } finally {
      await stop();
    }
    expect(c.errors).toEqual([]);
  }, 40_000);

  it("a first start that failed, tried again at each beat and then stopped, leaves its whole window owed, not the latest try's", async () => {
    const { platform, receiver } = await shared();
    // No mark yet: the first start looks back a horizon. An event from just before it, the platform gave up on.
    platform.messages.push(send('991', Math.floor(Date.now() / 1000)));
    await sleep(200);
    const b = receiver(undefined, {}, 'wrong');
    await until(() => b.errors.length === 1, 5000);
    // B hears deliveries for 4 s: its run is tried again at each beat (a second apart), each failing.
    const stopB = deliveriesEvery(b.webhooks, 100);
    await sleep(4000);
    await stopB();
    expect(b.errors.length).toBeGreaterThan(2);
    await b.webhooks.close();
    // A starts: B's first window (the horizon before its start) is still owed.
    const a = receiver();
    await until(() => a.handled.ids.includes('991'), 5000);
    expect(a.errors).toEqual([]);
  }, 30_000);
});
