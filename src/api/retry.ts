/**
 * When a failed call is tried again, and after how long.
 *
 * Safe retries only: a GET may be repeated after any transient failure (network, timeout, 408, 429, 5xx);
 * any method may be repeated after a 429 or 503 (the service refused before doing anything) or when the
 * connection was never made. A POST that failed after it was sent is not repeated: the service may have
 * acted on it. `Retry-After` is honoured; otherwise the delay is the shared backoff (src/platform/backoff.ts:
 * exponential, full jitter), so many clients that failed together do not come back together.
 */
import { ValidationError } from './errors.js';

/**
 * How a client repeats a failed call (`createChatClient({ retry })`, `createManagementClient({ retry })`).
 * Counts retries, the first call not included; the worker's `DeliveryRetryOptions` count runs.
 */
export interface ApiRetryOptions {
  /** How many times a call may be repeated (default 2; 0 turns retries off). */
  retries?: number;
  /** First backoff step in ms (default 200); retry n waits a random time up to `minDelayMs * 2^(n-1)`. */
  minDelayMs?: number;
  /** Longest backoff in ms (default 5000). */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this (ms, default 60 000) is not waited for: the error is thrown. */
  maxRetryAfterMs?: number;
}

/** @deprecated Use `ApiRetryOptions`: the same type, named apart from the worker's `DeliveryRetryOptions`. */
export type RetryOptions = ApiRetryOptions;

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

const RETRY_OPTIONS: readonly string[] = ['retries', 'minDelayMs', 'maxDelayMs', 'maxRetryAfterMs'];
const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];
const RETRIED_STATUSES: readonly number[] = [408, 425, 429, 500, 502, 503, 504];

/** `retry: 3`, `retry: false` or `retry: { retries, minDelayMs, … }`, checked. */
export function retryPolicy(option: number | boolean | ApiRetryOptions | undefined, what: string): RetryPolicy {
  const given: ApiRetryOptions =
    option === undefined || option === true ? {} : option === false ? { retries: 0 } : typeof option === 'number' ? { retries: option } : option;
  if (typeof given !== 'object' || given === null) throw new ValidationError(`${what}: retry is a number of retries, false, or an options object.`);
  const unknown = Object.keys(given).filter((name) => !RETRY_OPTIONS.includes(name));
  if (unknown.length > 0) {
    throw new ValidationError(`${what}: unknown retry option ${unknown.join(', ')}; the options are ${RETRY_OPTIONS.join(', ')}.`);
  }
  const policy = {
    retries: given.retries ?? 2,
    minDelayMs: given.minDelayMs ?? 200,
    maxDelayMs: given.maxDelayMs ?? 5_000,
    maxRetryAfterMs: given.maxRetryAfterMs ?? 60_000,
  };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0 || (name === 'retries' && !Number.isInteger(value))) {
      throw new ValidationError(`${what}: retry.${name} must be a non-negative ${name === 'retries' ? 'integer' : 'number'}.`);
    }
  }
  return policy;
}

function isIdempotent(method: string): boolean {
  return IDEMPOTENT_METHODS.includes(method);
}

/** Whether a call that ended with this status may be repeated. */
export function retriesStatus(method: string, status: number): boolean {
  if (status === 429 || status === 503) return true;
  return isIdempotent(method) && RETRIED_STATUSES.includes(status);
}

/** Whether a call whose fetch threw (network failure or timeout) may be repeated. */
export function retriesFailure(method: string, cause: unknown, timedOut: boolean): boolean {
  if (isIdempotent(method)) return true;
  // Network errors that happen before a byte of the request left: safe to repeat for any method.
  const neverSent: unknown[] = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'];
  return !timedOut && neverSent.includes(errorCode(cause));
}

/** The system error code of a fetch failure (undici puts it on `cause`). */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `Retry-After` in ms: delta seconds (decimals tolerated) or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
