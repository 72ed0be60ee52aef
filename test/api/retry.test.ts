/**
 * The retry rules on their own (src/api/retry.ts): which option values are accepted, which failures are
 * repeated for which methods and how `Retry-After` is read; the backoff, shared with the worker, is
 * test/platform/backoff.test.ts's. chat-client.test.ts checks the same rules end to end against a real
 * server; here each boundary is pinned.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/api/errors.js';
import { parseRetryAfter, retriesFailure, retriesStatus, retryPolicy } from '../../src/api/retry.js';
import { sleep } from '../../src/platform/sleep.js';

const DEFAULTS = { retries: 2, minDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 60_000 };

describe('retryPolicy', () => {
  it('fills the defaults: no option, true, false (no retries), a number of retries, part of the options', () => {
    expect(retryPolicy(undefined, 'x')).toEqual(DEFAULTS);
    expect(retryPolicy(true, 'x')).toEqual(DEFAULTS);
    expect(retryPolicy(false, 'x')).toEqual({ ...DEFAULTS, retries: 0 });
    expect(retryPolicy(5, 'x')).toEqual({ ...DEFAULTS, retries: 5 });
    expect(retryPolicy({ minDelayMs: 0, maxRetryAfterMs: 10 }, 'x')).toEqual({ ...DEFAULTS, minDelayMs: 0, maxRetryAfterMs: 10 });
    expect(retryPolicy({ retries: 0, minDelayMs: 1.5, maxDelayMs: 0, maxRetryAfterMs: 0 }, 'x')).toEqual({ retries: 0, minDelayMs: 1.5, maxDelayMs: 0, maxRetryAfterMs: 0 });
  });

  it('refuses what is not a number, false or an options object', () => {
    for (const option of ['3', null]) {
      expect(() => retryPolicy(option as unknown as number, 'createChatClient')).toThrow(
        new ValidationError('createChatClient: retry is a number of retries, false, or an options object.'),
      );
    }
  });

  it('names unknown options and lists the known ones', () => {
    expect(() => retryPolicy({ retries: 1, tries: 2, delay: 3 } as never, 'createChatClient')).toThrow(
      'createChatClient: unknown retry option tries, delay; the options are retries, minDelayMs, maxDelayMs, maxRetryAfterMs.',
    );
  });

  it('refuses negative, infinite or NaN values, and retries that are not whole', () => {
    for (const [name, value] of [['retries', -1], ['minDelayMs', -0.5], ['maxDelayMs', Number.POSITIVE_INFINITY], ['maxRetryAfterMs', Number.NaN]] as const) {
      const kind = name === 'retries' ? 'integer' : 'number';
      expect(() => retryPolicy({ [name]: value }, 'x')).toThrow(new ValidationError(`x: retry.${name} must be a non-negative ${kind}.`));
    }
    expect(() => retryPolicy(1.5, 'x')).toThrow('x: retry.retries must be a non-negative integer.');
    expect(() => retryPolicy(-1, 'x')).toThrow('x: retry.retries must be a non-negative integer.');
  });
});

describe('what is repeated', () => {
  it('429 and 503 for any method; other transient statuses only for GET, HEAD and OPTIONS', () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
      expect(retriesStatus(method, 429)).toBe(true);
      expect(retriesStatus(method, 503)).toBe(true);
    }
    for (const status of [408, 425, 500, 502, 504]) {
      for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(retriesStatus(method, status)).toBe(true);
      for (const method of ['POST', 'PATCH', 'DELETE']) expect(retriesStatus(method, status)).toBe(false);
    }
    for (const status of [400, 401, 404, 409, 501, 505]) expect(retriesStatus('GET', status)).toBe(false);
  });

  it('a failed fetch: always for GET/HEAD/OPTIONS; for others only when the connection was never made and it did not time out', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      expect(retriesFailure(method, new Error('reset'), false)).toBe(true);
      expect(retriesFailure(method, undefined, true)).toBe(true);
    }
    expect(retriesFailure('POST', refused, false)).toBe(true);
    expect(retriesFailure('POST', refused, true)).toBe(false);
    for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']) expect(retriesFailure('PUT', { code }, false)).toBe(true);
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']) expect(retriesFailure('POST', { code }, false)).toBe(false);
    expect(retriesFailure('POST', new Error('no code'), false)).toBe(false);
    expect(retriesFailure('POST', undefined, false)).toBe(false);
  });

  it('finds the code up to three causes deep, skipping a code that is not a string', () => {
    const nest = (depth: number, leaf: object): object => (depth === 0 ? leaf : { cause: nest(depth - 1, leaf) });
    expect(retriesFailure('POST', nest(3, { code: 'ECONNREFUSED' }), false)).toBe(true);
    expect(retriesFailure('POST', nest(4, { code: 'ECONNREFUSED' }), false)).toBe(false);
    expect(retriesFailure('POST', { code: 42, cause: { code: 'ECONNREFUSED' } }, false)).toBe(true);
    // The first string code decides.
    expect(retriesFailure('POST', { code: 'ECONNRESET', cause: { code: 'ECONNREFUSED' } }, false)).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  it('reads delta seconds, decimals and spaces tolerated', () => {
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter('1.25', now)).toBe(1_250);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date as the time left until it, never negative', () => {
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
  });

  it('is undefined when absent or unreadable; digits with something after them are not seconds', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('5 seconds', now)).toBeUndefined();
    expect(parseRetryAfter('x5', now)).toBeUndefined();
    expect(parseRetryAfter('5x', now)).toBeUndefined();
  });

  it('measures from the current time by default', () => {
    const left = parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())!;
    expect(left).toBeGreaterThan(55_000);
    expect(left).toBeLessThanOrEqual(60_000);
  });
});

describe('sleep', () => {
  it('resolves after the delay and leaves no abort listener behind', async () => {
    const controller = new AbortController();
    const started = performance.now();
    await sleep(30, controller.signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it('rejects at once with the reason of a signal already aborted', async () => {
    const reason = new Error('stop');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects with the reason as soon as the signal aborts, long before the delay', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const started = performance.now();
    const waiting = sleep(60_000, controller.signal);
    setTimeout(() => controller.abort(reason), 10);
    await expect(waiting).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
