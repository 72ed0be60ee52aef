/**
 * The claim loop every store runs: look for a due entry, and, finding none, wait until one may be due (or
 * the store says one was stored), until the claim's `waitMs` is spent or its signal aborts. A store supplies
 * the look and the wait; the deadline, the end conditions and the order of the checks are written here once.
 */
import type { ClaimOptions, InboxClaim } from '../../delivery/port.js';

export interface ClaimSource {
  /** Throws when the store can hand nothing out any more (it was closed): checked before every look. */
  assertOpen?(): void;
  /**
   * One look: a due entry claimed for `leaseMs`, or undefined. It may be synchronous (memory), a write
   * (SQL), or block by itself up to `leftMs` (a blocking read): a store whose look blocks needs no `wait`.
   */
  take(leaseMs: number, signal: AbortSignal | undefined, leftMs: number): InboxClaim | undefined | Promise<InboxClaim | undefined>;
  /**
   * Waits at most `leftMs` for an entry to become due: a timer, woken early by a put of this process
   * (`Waiters`), a notification or a pub/sub message. `mark` is what `mark()` answered before the look.
   */
  wait?(leftMs: number, signal: AbortSignal | undefined, mark: number): Promise<void>;
  /**
   * Noted before each look, handed to `wait`: a notification counter, so that one landing between a look
   * that found nothing and the wait is not slept through.
   */
  mark?(): number;
  /** True once waiting is pointless (the store closed): the claim then ends with undefined. */
  stopped?(): boolean;
}

/**
 * Claims one entry, waiting up to `waitMs` (counted from `startedAt`: a store that queues claims behind
 * one another counts the time queued) for one to become due.
 */
export async function claimLoop(source: ClaimSource, { leaseMs, waitMs, signal }: ClaimOptions, startedAt = Date.now()): Promise<InboxClaim | undefined> {
  const deadline = startedAt + waitMs;
  for (;;) {
    source.assertOpen?.();
    const mark = source.mark?.() ?? 0;
    const taken = source.take(leaseMs, signal, deadline - Date.now());
    // A look that answered at once is not awaited: between it and the wait, a put of this turn would find no
    // waiter to wake, and the claim would sleep through it.
    const claim = isPromise(taken) ? await taken : taken;
    if (claim) return claim;
    const left = deadline - Date.now();
    // At 0 left the claim ends: a wait of 0 ms followed by one more look would find what this one did.
    if (left <= 0 || signal?.aborted || source.stopped?.()) return undefined;
    await source.wait?.(left, signal, mark);
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
