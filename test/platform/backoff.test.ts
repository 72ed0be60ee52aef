/**
 * The one backoff (src/platform/backoff.ts) and both paths that wait on it: the worker retrying a failed
 * event (attempts count runs, the first included) and the REST client retrying a failed call (retries do
 * not count the first call). Each path waits what it waited when it had its own copy: the first retry up to
 * minDelayMs, doubling, capped at maxDelayMs, and as many tries as before.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ApiError, createChatClient } from '../../src/api/index.js';
import { createWorker, memoryInbox, type Inbox, type Worker } from '../../src/index.js';
import { backoffMs } from '../../src/platform/backoff.js';
import { type Platform, startPlatform } from '../api/platform-server.js';

type FailOutcome = Parameters<Inbox['fail']>[1];

const RANGE = { minDelayMs: 40, maxDelayMs: 100 };
/** Half of each ceiling (40, 80, 100): 20, 40, 50 ms, the same under the old rounding of either copy. */
const HALF_WAITS = [20, 40, 50];

afterEach(() => vi.restoreAllMocks());

describe('backoffMs', () => {
  it('draws under minDelayMs * 2^(retry - 1), capped at maxDelayMs, in whole ms', () => {
    const range = { minDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5, 11].map((retry) => backoffMs(retry, range, () => 1))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoffMs(3, range, () => 0)).toBe(0);
    expect(backoffMs(3, range, () => 0.25)).toBe(100);
    expect(backoffMs(1, range, () => 0.333)).toBe(33);
    expect(backoffMs(1, range, () => 0.9999)).toBe(99);
  });

  it('stays a number for any retry count, a zero base included', () => {
    expect(backoffMs(5_000, { minDelayMs: 0, maxDelayMs: 1_000 }, () => 0.5)).toBe(0);
    expect(backoffMs(5_000, { minDelayMs: 1, maxDelayMs: 1_000 }, () => 0.5)).toBe(500);
  });

  it('uses Math.random by default, within the ceiling', () => {
    for (let i = 0; i < 50; i++) {
      const delay = backoffMs(2, { minDelayMs: 100, maxDelayMs: 1_000 });
      expect(Number.isInteger(delay) && delay >= 0 && delay < 200).toBe(true);
    }
  });
});

describe('the worker retrying a failed event', () => {
  let worker: Worker | undefined;
  afterEach(() => worker?.close());

  it('waits 20, 40 and 50 ms after runs 1 to 3 of 4, then buries the event: 4 runs in all', async () => {
    const inbox = memoryInbox();
    const written: Array<{ at: number; outcome: FailOutcome }> = [];
    const fail = inbox.fail.bind(inbox);
    inbox.fail = (claim, outcome) => (written.push({ at: Date.now(), outcome }), fail(claim, outcome));
    const rawBody = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
    await inbox.put({ key: 'k1', trigger: 'message_sent', event: JSON.parse(rawBody), rawBody, receivedAt: Date.now() });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    let runs = 0;
    worker = createWorker({ inbox, logger: {}, retry: { attempts: 4, ...RANGE } })
      .on('message_sent', () => {
        runs++;
        throw new Error('broke');
      })
      .onError(() => undefined)
      .start();
    await vi.waitFor(async () => expect((await inbox.stats()).dead).toBe(1), { timeout: 5_000 });
    expect(runs).toBe(4);
    expect(written.map(({ outcome }) => ('dead' in outcome ? 'dead' : 'retry'))).toEqual(['retry', 'retry', 'retry', 'dead']);
    // The retry time is taken just before the write, in the same turn: at most a millisecond apart.
    const waits = written.slice(0, 3).map(({ at, outcome }) => (outcome as { retryAt: number }).retryAt - at);
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(HALF_WAITS[i]! - 1));
    waits.forEach((wait, i) => expect(wait).toBeLessThanOrEqual(HALF_WAITS[i]!));
  });
});

describe('the REST client retrying a failed call', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await startPlatform({ appId: 'app42', apiKey: 'sk-backoff-0123456789', key: 'k', secret: 's', users: { us: [] } });
  });
  afterAll(() => platform.close());

  it('waits 20, 40 and 50 ms before retries 1 to 3, then gives up: 4 calls in all', async () => {
    const waits: unknown[] = [];
    const logger = { warn: (fields: Record<string, unknown>) => void waits.push(fields.delayMs) };
    const client = createChatClient({ apiKey: 'sk-backoff-0123456789', baseUrl: `${platform.url}/v3`, logger, retry: { retries: 3, ...RANGE } });
    platform.plan(...Array.from({ length: 4 }, () => ({ status: 503 })));
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const before = platform.requests.length;
    const error = await client.users.list().then(() => expect.unreachable('should have failed'), (reason: unknown) => reason as ApiError);
    expect(error.status).toBe(503);
    expect(error.attempts).toBe(4);
    expect(platform.requests.length - before).toBe(4);
    expect(waits).toEqual(HALF_WAITS);
  });
});
