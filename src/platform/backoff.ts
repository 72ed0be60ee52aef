/**
 * How long to wait before trying again: exponential backoff with full jitter (a random delay between 0 and an
 * exponentially growing ceiling), so that many failures at once do not come back at once. One function for
 * both rooms that retry: the worker (a failed event, src/delivery/retry-policy.ts) and the REST client (a
 * failed call, src/api/retry.ts); each keeps its own options and defaults. Here, beside the runtime seam,
 * because it is the one folder both may import; it imports nothing.
 */

export interface BackoffRange {
  /** The first retry waits up to this long (ms). */
  minDelayMs: number;
  /** No retry waits longer than this (ms). */
  maxDelayMs: number;
}

/**
 * The wait in whole ms before retry number `retry` (1 = the first retry): a random time under
 * min(maxDelayMs, minDelayMs * 2^(retry - 1)). The exponent stops at 52, where the ceiling is long past any
 * maxDelayMs: beyond 1023, 2^n is Infinity, and 0 * Infinity would make the wait NaN.
 */
export function backoffMs(retry: number, range: BackoffRange, random: () => number = Math.random): number {
  const ceiling = Math.min(range.maxDelayMs, range.minDelayMs * 2 ** Math.min(retry - 1, 52));
  return Math.floor(random() * ceiling);
}
