/**
 * When a failed event runs again: exponential backoff with full jitter (a random delay between 0 and
 * min(maxDelayMs, minDelayMs * 2^(attempt-1))), so many events failing together do not come back together.
 * After `attempts` runs the event is dead.
 */
import { ConfigurationError } from '../dispatch/errors.js';

export interface RetryOptions {
  /** How many times an event runs at most, the first run included. Default 5. */
  attempts?: number;
  /** The backoff's base: the first retry waits up to this long. Default 1 000 ms. */
  minDelayMs?: number;
  /** No retry waits longer than this. Default 300 000 ms (5 minutes). */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ attempts: 5, minDelayMs: 1000, maxDelayMs: 300_000 });

export function retryPolicy(options: RetryOptions | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...options };
  if (!(Number.isSafeInteger(policy.attempts) && policy.attempts >= 1)) {
    throw new ConfigurationError('retry.attempts', '`retry.attempts` must be a whole number, at least 1 (1: never retry).');
  }
  if (!(policy.minDelayMs >= 0 && policy.maxDelayMs >= policy.minDelayMs)) {
    throw new ConfigurationError('retry.minDelayMs', '`retry.minDelayMs` must be at least 0 and `retry.maxDelayMs` at least `minDelayMs`.');
  }
  return policy;
}

/** The delay before the run after `attempt` (1 = after the first run failed). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** Math.min(attempt - 1, 52));
  return Math.floor(random() * ceiling);
}
