/**
 * Requests of one turn sent together (src/stores/kit/turn-batch.ts, the PostgreSQL inbox's puts, claims and
 * completions): one answer each, at most `maxInFlight` batches out, and callers that give up before the send.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { GaveUp, TurnBatch } from '../../src/stores/kit/turn-batch.js';

/** A `send` that records each batch and answers it when the test says so. */
function heldSend<O>() {
  const batches: { items: number[]; answer: (results: Array<O | Error>) => void; fail: (error: unknown) => void }[] = [];
  const send = (items: number[]) =>
    new Promise<Array<O | Error>>((answer, fail) => {
      batches.push({ items, answer, fail });
    });
  return { batches, send };
}

/**
 * Watches TurnBatch's own setImmediate calls (its callbacks call `#next`): a spy on the global also sees
 * calls from whatever else runs in the worker, such as a library or an earlier file's leftover timers.
 */
function watchScheduling() {
  const spy = vi.spyOn(globalThis, 'setImmediate');
  return {
    count: () => spy.mock.calls.filter(([callback]) => String(callback).includes('#next')).length,
    restore: () => spy.mockRestore(),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await turn();
};

describe('TurnBatch', () => {
  it('sends the requests of one turn in one batch and answers each with its own result or Error', async () => {
    const { batches, send } = heldSend<string>();
    const batch = new TurnBatch(send, 4);
    const answers = [1, 2, 3, 4].map((item) => batch.add(item));
    await turns(2);
    expect(batches.map((b) => b.items)).toEqual([[1, 2, 3, 4]]);
    batches[0]!.answer(['one', new Error('two refused'), 'three']);
    const settled = await Promise.allSettled(answers);
    expect(settled).toEqual([
      { status: 'fulfilled', value: 'one' },
      { status: 'rejected', reason: new Error('two refused') },
      { status: 'fulfilled', value: 'three' },
      { status: 'fulfilled', value: undefined },
    ]);
  });

  it('a send that fails rejects every request of its batch with that error', async () => {
    const batch = new TurnBatch<number, string>(() => Promise.reject(new Error('connection lost')), 1);
    const settled = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual(['connection lost', 'connection lost']);
  });

  it('requests made while maxInFlight batches are out wait, and then go together in one batch', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    const first = batch.add(1);
    await turns(2);
    const later = [batch.add(2)];
    await turn();
    later.push(batch.add(3));
    await turns(3);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.answer([10]);
    expect(await first).toBe(10);
    await turns(2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3]]);
    batches[1]!.answer([20, 30]);
    expect(await Promise.all(later)).toEqual([20, 30]);
  });

  it('more than maxSize waiting goes out in several batches, side by side up to maxInFlight', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 2, 2);
    const answers = [1, 2, 3, 4, 5].map((item) => batch.add(item));
    await turns(3);
    expect(batches.map((b) => b.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    batches[1]!.answer([3, 4]);
    await turns(2);
    expect(batches.map((b) => b.items)).toEqual([[1, 2], [3, 4], [5]]);
    batches[0]!.answer([1, 2]);
    batches[2]!.answer([5]);
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4, 5]);
  });

  it('the default maxSize is 1000', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    const answers = Array.from({ length: 1001 }, (_, i) => batch.add(i));
    await turns(2);
    expect(batches.map((b) => b.items.length)).toEqual([1000]);
    batches[0]!.answer(batches[0]!.items);
    await turns(2);
    expect(batches.map((b) => b.items.length)).toEqual([1000, 1]);
    batches[1]!.answer(batches[1]!.items);
    expect((await Promise.all(answers)).at(-1)).toBe(1000);
  });

  it('a caller that gave up before the send is dropped (GaveUp), one that gave up after gets its answer', async () => {
    const { batches, send } = heldSend<string>();
    const batch = new TurnBatch(send, 1);
    const before = new AbortController();
    before.abort();
    await expect(batch.add(0, before.signal)).rejects.toBeInstanceOf(GaveUp);

    const waiting = new AbortController();
    const sent = new AbortController();
    const kept = batch.add(1, sent.signal);
    const dropped = batch.add(2, waiting.signal);
    waiting.abort();
    const error = await dropped.catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(GaveUp);
    expect((error as Error).message).toBe('The caller gave up before the request was sent: nothing was sent for it.');
    expect(getEventListeners(waiting.signal, 'abort')).toHaveLength(0);
    await turns(2);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    sent.abort();
    batches[0]!.answer(['one']);
    expect(await kept).toBe('one');
    expect(getEventListeners(sent.signal, 'abort')).toHaveLength(0);
  });

  it('an answer or a failure removes the abort listener; an abort after the answer changes nothing', async () => {
    const batch = new TurnBatch<number, string>(async (items) => items.map(String), 1);
    const answered = new AbortController();
    expect(await batch.add(1, answered.signal)).toBe('1');
    expect(getEventListeners(answered.signal, 'abort')).toHaveLength(0);

    const failing = new TurnBatch<number, string>(() => Promise.reject(new Error('down')), 1);
    const failed = new AbortController();
    await expect(failing.add(1, failed.signal)).rejects.toThrow('down');
    expect(getEventListeners(failed.signal, 'abort')).toHaveLength(0);
  });

  it('settled() resolves at once when idle, else once nothing waits and nothing is in flight', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    let idle = false;
    await batch.settled();

    const answer = batch.add(1);
    const later = batch.settled().then(() => (idle = true));
    await turns(2);
    expect(idle).toBe(false);
    const second = batch.add(2);
    batches[0]!.answer([1]);
    await turns(3);
    expect(idle).toBe(false); // 2 is out now
    batches[1]!.answer([2]);
    await Promise.all([answer, second, later]);
    expect(idle).toBe(true);
  });

  it('settled() resolves as soon as the only waiting request is dropped by its abort, before the turn ends', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    const controller = new AbortController();
    const dropped = batch.add(1, controller.signal).catch((reason: unknown) => reason);
    let idle = false;
    void batch.settled().then(() => (idle = true));
    controller.abort();
    expect(await dropped).toBeInstanceOf(GaveUp);
    await Promise.resolve();
    expect(idle).toBe(true);
    await turns(2);
    expect(batches).toHaveLength(0);
  });

  it('settled() waits for a batch in flight when nothing else waits', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    const answer = batch.add(1);
    await turns(2);
    let idle = false;
    const later = batch.settled().then(() => (idle = true));
    await turns(2);
    expect(idle).toBe(false);
    batches[0]!.answer([1]);
    await Promise.all([answer, later]);
    expect(idle).toBe(true);
  });

  it('a dropped request does not make settled() resolve while others wait or a batch is in flight', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 1);
    // Nothing in flight, one other request waiting.
    const dropping = new AbortController();
    const kept = batch.add(1);
    const dropped = batch.add(2, dropping.signal).catch((reason: unknown) => reason);
    let idle = false;
    void batch.settled().then(() => (idle = true));
    dropping.abort();
    expect(await dropped).toBeInstanceOf(GaveUp);
    await Promise.resolve();
    expect(idle).toBe(false);
    await turns(2);
    // A batch in flight, nothing else waiting.
    const second = new AbortController();
    const droppedToo = batch.add(3, second.signal).catch((reason: unknown) => reason);
    second.abort();
    expect(await droppedToo).toBeInstanceOf(GaveUp);
    await Promise.resolve();
    expect(idle).toBe(false);
    batches[0]!.answer([1]);
    expect(await kept).toBe(1);
    await turns(2);
    expect(idle).toBe(true);
  });

  it('requests made in the turn a batch ends in still go out together', async () => {
    const { batches, send } = heldSend<number>();
    const batch = new TurnBatch(send, 2);
    const first = batch.add(1);
    await turns(2);
    batches[0]!.answer([1]);
    const one = batch.add(2);
    for (let i = 0; i < 10; i++) await Promise.resolve(); // the first batch's answer is handled meanwhile
    const two = batch.add(3);
    await turns(2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3]]);
    batches[1]!.answer([2, 3]);
    expect(await Promise.all([first, one, two])).toEqual([1, 2, 3]);
  });

  it('schedules one send per turn, not one per request, and none once all went', async () => {
    const scheduled = watchScheduling();
    try {
      const { batches, send } = heldSend<number>();
      const batch = new TurnBatch(send, 5, 1);
      // Waits turns, not a timer: a timer can fire before a send scheduled one turn later, on a busy machine.
      const answers = [batch.add(1), batch.add(2)];
      expect(scheduled.count()).toBe(1);
      await turns(4);
      // [1] went, then [2] beside it, each from one scheduled call.
      expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
      expect(scheduled.count()).toBe(2);
      batches[0]!.answer([1]);
      batches[1]!.answer([2]);
      expect(await Promise.all(answers)).toEqual([1, 2]);
      await turns(4);
      expect(scheduled.count()).toBe(2);

      // With every batch slot taken, requests wait without scheduling anything; the end of a batch sends them.
      const full = new TurnBatch(send, 1);
      const held = full.add(10);
      await turns(4);
      const calls = scheduled.count();
      const waiting = [full.add(11), full.add(12)];
      await turns(4);
      expect(scheduled.count()).toBe(calls);
      batches.at(-1)!.answer([10]);
      await held;
      await turns(4);
      expect(batches.at(-1)!.items).toEqual([11, 12]);
      batches.at(-1)!.answer([11, 12]);
      expect(await Promise.all(waiting)).toEqual([11, 12]);
    } finally {
      scheduled.restore();
    }
  });

  it('a request made while the next send is already scheduled joins it', async () => {
    const scheduled = watchScheduling();
    try {
      const batches: number[][] = [];
      let batch!: TurnBatch<number, number>;
      const later: Promise<number>[] = [];
      batch = new TurnBatch<number, number>(async (items) => {
        batches.push(items);
        if (items[0] === 1) queueMicrotask(() => later.push(batch.add(3)));
        return items;
      }, 5, 1);
      const answers = [batch.add(1), batch.add(2)];
      await turns(6);
      expect(batches).toEqual([[1], [2], [3]]);
      expect(await Promise.all([...answers, ...later])).toEqual([1, 2, 3]);
      expect(scheduled.count()).toBe(3);
    } finally {
      scheduled.restore();
    }
  });
});
