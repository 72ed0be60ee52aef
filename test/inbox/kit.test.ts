/**
 * The store toolkit (src/stores/kit/): the claim loop against sources of each kind a store can be (a
 * synchronous look with a timer, a polled look, a look that blocks by itself, a notification counter), the
 * waiters, a turn batch's byte cap and send gate, the window option, the sweep timer and admin batches.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { InboxClaim } from '../../src/delivery/port.js';
import {
  claimLoop,
  claimOfRow,
  DEFAULT_DURABLE_WINDOW_MS,
  DEFAULT_MEMORY_WINDOW_MS,
  inBatches,
  listingOfRow,
  startSweeps,
  TurnBatch,
  Waiters,
  windowOption,
  type ClaimSource,
} from '../../src/stores/kit/index.js';

const body = JSON.stringify({ trigger: 'message_sent', appId: 'app', data: { message: { id: 'm1' } } });
const claimOf = (key: string): InboxClaim => ({ key, trigger: 'message_sent', event: JSON.parse(body), rawBody: body, receivedAt: 1, attempt: 1, token: `t-${key}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A store of keys in an array, its claims waiting on Waiters: what memoryInbox and sqliteInbox are. */
function arraySource(pollMs = 10_000) {
  const due: string[] = [];
  const waiters = new Waiters();
  const looks: number[] = [];
  let closed = false;
  const source: ClaimSource = {
    assertOpen: () => {
      if (closed) throw new Error('closed');
    },
    take: (_leaseMs, _signal, left) => {
      looks.push(left);
      const key = due.shift();
      return key === undefined ? undefined : claimOf(key);
    },
    wait: (left, signal) => waiters.wait(Math.min(pollMs, left), signal),
  };
  const put = (key: string) => (due.push(key), waiters.wake());
  return { source, put, waiters, looks, close: () => ((closed = true), waiters.wakeAll()) };
}

describe('claimLoop', () => {
  it('answers at once with a due entry, and with undefined at once when waitMs is 0', async () => {
    const { source, put, looks } = arraySource();
    put('a');
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 0 })).toMatchObject({ key: 'a' });
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 0 })).toBeUndefined();
    expect(looks).toHaveLength(2);
  });

  it('waits for a put, which wakes it at once, long before its poll', async () => {
    const { source, put } = arraySource();
    const started = performance.now();
    const waiting = claimLoop(source, { leaseMs: 1000, waitMs: 5000 });
    await sleep(20);
    put('b');
    expect(await waiting).toMatchObject({ key: 'b' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a synchronous look is not awaited: a put right after the call, in the same turn, wakes the claim', async () => {
    const { source, put } = arraySource();
    const started = performance.now();
    const waiting = claimLoop(source, { leaseMs: 1000, waitMs: 5000 });
    put('now');
    expect(await waiting).toMatchObject({ key: 'now' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('polls every pollMs until waitMs is spent, then ends with undefined', async () => {
    const { source, looks } = arraySource(20);
    const started = performance.now();
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 110 })).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(looks.length).toBeGreaterThanOrEqual(3);
    expect(looks.length).toBeLessThanOrEqual(12);
    // Each look is told how long is left, less each time.
    expect(looks[0]).toBeLessThanOrEqual(110);
    expect(looks.at(-1)).toBeLessThan(looks[0]!);
  });

  it('ends with undefined once its signal aborts, leaving no listener on it', async () => {
    const { source, waiters } = arraySource();
    const controller = new AbortController();
    const waiting = claimLoop(source, { leaseMs: 1000, waitMs: 10_000, signal: controller.signal });
    await sleep(10);
    expect(waiters.size).toBe(1);
    controller.abort();
    expect(await waiting).toBeUndefined();
    expect(waiters.size).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('throws what assertOpen throws before every look: a claim waiting when the store closes rejects', async () => {
    const { source, close } = arraySource();
    const waiting = claimLoop(source, { leaseMs: 1000, waitMs: 10_000 });
    await sleep(10);
    close();
    await expect(waiting).rejects.toThrow('closed');
    await expect(claimLoop(source, { leaseMs: 1000, waitMs: 0 })).rejects.toThrow('closed');
  });

  it('ends with undefined, without another look, once stopped() says so (the memory inbox closed)', async () => {
    const { source, close, looks } = arraySource();
    let stopped = false;
    const quiet: ClaimSource = { take: source.take, wait: source.wait!, stopped: () => stopped };
    const waiting = claimLoop(quiet, { leaseMs: 1000, waitMs: 10_000 });
    await sleep(10);
    stopped = true;
    close();
    expect(await waiting).toBeUndefined();
    expect(looks).toHaveLength(2);
  });

  it('hands wait() the mark noted before the look: a notification landing in between is not slept through', async () => {
    let generation = 0;
    const marks: number[] = [];
    let looks = 0;
    const source: ClaimSource = {
      mark: () => generation,
      take: () => {
        looks += 1;
        // A notification arrives while the first look is in flight.
        if (looks === 1) generation += 1;
        return looks === 2 ? claimOf('c') : undefined;
      },
      wait: async (_left, _signal, seen) => {
        marks.push(seen);
        if (seen === generation) await sleep(10_000);
      },
    };
    const started = performance.now();
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 20_000 })).toMatchObject({ key: 'c' });
    expect(marks).toEqual([0]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a source whose look blocks by itself needs no wait: it is asked again with what is left', async () => {
    const lefts: number[] = [];
    const source: ClaimSource = {
      async take(_leaseMs, _signal, left) {
        lefts.push(left);
        // A blocking read woken early (another process took the entry it was told of) answers nothing.
        await sleep(Math.min(left, 30));
        return lefts.length === 3 ? claimOf('d') : undefined;
      },
    };
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 5000 })).toMatchObject({ key: 'd' });
    expect(lefts).toHaveLength(3);
    expect(lefts[2]).toBeLessThan(lefts[0]!);
  });

  it('counts waitMs from startedAt: a claim queued behind another waits only what is left', async () => {
    const { source } = arraySource(20);
    const started = performance.now();
    expect(await claimLoop(source, { leaseMs: 1000, waitMs: 10_000 }, Date.now() - 9_950)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('Waiters', () => {
  it('wake() wakes the one waiting longest; wake(n) that many; wakeAll() every one; none is left behind', async () => {
    const waiters = new Waiters();
    const woken: number[] = [];
    const waits = [0, 1, 2, 3, 4].map((n) => waiters.wait(10_000).then(() => woken.push(n)));
    expect(waiters.size).toBe(5);
    waiters.wake();
    await turn();
    expect(woken).toEqual([0]);
    waiters.wake(2);
    await turn();
    expect(woken).toEqual([0, 1, 2]);
    waiters.wakeAll();
    await Promise.all(waits);
    expect(woken).toEqual([0, 1, 2, 3, 4]);
    expect(waiters.size).toBe(0);
    waiters.wake(3); // nobody waits: nothing happens
  });
});

describe('TurnBatch limits', () => {
  it('a batch carries maxBytes at most, one request at least however large', async () => {
    const sent: string[][] = [];
    const batch = new TurnBatch<string, number>(async (items) => (sent.push(items), items.map((item) => item.length)), 1, 1000, {
      maxBytes: 10,
      sizeOf: (item) => item.length,
    });
    const answers = await Promise.all(['aaaa', 'bbbb', 'cc', 'dddddddddddddddd', 'e', 'ffffffffff', 'g'].map((item) => batch.add(item)));
    expect(answers).toEqual([4, 4, 2, 16, 1, 10, 1]);
    expect(sent).toEqual([['aaaa', 'bbbb', 'cc'], ['dddddddddddddddd'], ['e'], ['ffffffffff'], ['g']]);
  });

  it('holds every batch back while canSend says no, sends on resume(), and dropWaiting rejects what waits', async () => {
    let up = false;
    const sent: number[][] = [];
    const batch = new TurnBatch<number, number>(async (items) => (sent.push(items), items), 2, 1000, { canSend: () => up });
    const held = [batch.add(1), batch.add(2)];
    await turn();
    await turn();
    expect(sent).toEqual([]);
    expect(batch.waiting).toBe(2);
    up = true;
    batch.resume();
    expect(await Promise.all(held)).toEqual([1, 2]);
    expect(sent).toEqual([[1, 2]]);

    up = false;
    const dropped = [batch.add(3), batch.add(4)];
    batch.dropWaiting(() => new Error('the connection was lost'));
    const settled = await Promise.allSettled(dropped);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual(['the connection was lost', 'the connection was lost']);
    expect(batch.waiting).toBe(0);
    await batch.settled();
    expect(sent).toEqual([[1, 2]]);
  });
});

describe('windows, sweeps and admin batches', () => {
  it('windowOption: the default when none is given, the one given, and a TypeError naming the store otherwise', () => {
    expect(DEFAULT_DURABLE_WINDOW_MS).toBe(86_400_000);
    expect(DEFAULT_MEMORY_WINDOW_MS).toBe(600_000);
    expect(windowOption('sqliteInbox', undefined)).toBe(DEFAULT_DURABLE_WINDOW_MS);
    expect(windowOption('memoryInbox', undefined, DEFAULT_MEMORY_WINDOW_MS)).toBe(600_000);
    expect(windowOption('sqliteInbox', 5)).toBe(5);
    for (const bad of [0, -1, NaN, null, -Infinity]) {
      expect(() => windowOption('redisInbox', bad as number)).toThrow(new TypeError('redisInbox: `windowMs` must be a positive number of milliseconds.'));
    }
  });

  it('startSweeps runs its sweep on a timer that keeps no process alive, never two at once, a failure tried again', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const sweeps = startSweeps(async () => {
      runs += 1;
      running += 1;
      most = Math.max(most, running);
      await sleep(35);
      running -= 1;
      if (runs === 1) throw new Error('connection lost');
    }, 10);
    await sleep(200);
    sweeps.stop();
    const after = runs;
    await sleep(50);
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
    expect(runs).toBe(after);
  });

  it('inBatches repeats until a batch handles fewer than the batch size, and resolves the total', async () => {
    const counts = [3, 3, 3, 1, 9];
    const calls: number[] = [];
    expect(await inBatches(async () => (calls.push(1), counts.shift()!), 3)).toBe(10);
    expect(calls).toHaveLength(4);
    expect(await inBatches(async () => 0, 3)).toBe(0);
  });
});

describe('rows', () => {
  const row = { key: 'k', trigger: 'message_sent', state: 3, received_at: '17', attempts: 2, last_error: 'boom', raw_body: body, traceparent: null };

  it('claimOfRow reads the claim, its receipt as a number and no traceparent when the column is NULL', () => {
    expect(claimOfRow(row, 'tok')).toEqual({ key: 'k', trigger: 'message_sent', event: JSON.parse(body), rawBody: body, receivedAt: 17, attempt: 2, token: 'tok' });
    const traced = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(claimOfRow({ ...row, traceparent: traced }, 'tok').traceparent).toBe(traced);
  });

  it('listingOfRow names the state, keeps the error, and leaves the event out of a row without a body', () => {
    expect(listingOfRow(row)).toEqual({ key: 'k', trigger: 'message_sent', state: 'dead', receivedAt: 17, attempts: 2, lastError: 'boom', event: JSON.parse(body), rawBody: body });
    expect(listingOfRow({ ...row, state: 2, last_error: null, raw_body: null })).toEqual({ key: 'k', trigger: 'message_sent', state: 'done', receivedAt: 17, attempts: 2 });
  });
});
