/**
 * A hostile or broken `GET /messages` against reconcile's walk, on a real node:http server on loopback: a
 * `meta.next` that goes backwards or never advances, pages of a second past `until`, a Retry-After far too
 * long, a body that is not JSON. Each must end the walk in bounded time with an ApiError, never loop, never
 * wait for days, never hand an event twice, never name the key.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createChatClient } from '../../src/api/index.js';
import { createWebhooks } from '../../src/index.js';
import { reconcile } from '../../src/reconcile/index.js';
import { MAX_SECOND_IDS, walkMessages } from '../../src/reconcile/walk.js';

const parts = { appId: '2601c4f1a2b3c4d5', region: 'us', webhook: 'wh_chat_events' };
const T = 1_780_000_000;
const KEY = 'sk_hostile_0123456789abcdef';

type Answer = (url: URL, calls: number) => { status?: number; headers?: Record<string, string>; body: string };
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

async function hostile(answer: Answer): Promise<{ baseUrl: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const { status = 200, headers = {}, body } = answer(url, ++calls);
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise((resolve) => server.close(resolve)));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

function page(first: number, count: number, second: (i: number) => number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({ id: String(first + i), sentAt: second(i), category: 'message', type: 'text', sender: 'u1', receiver: 'u2', receiverType: 'user', data: { text: 'hi' } }));
}

function receiver(): { webhooks: ReturnType<typeof createWebhooks>; sent: string[] } {
  const webhooks = createWebhooks({ auth: { username: 'platform', password: 's3cret' }, logger: {} });
  closing.push(() => webhooks.close());
  const sent: string[] = [];
  webhooks.on('message_sent', (event) => void sent.push(event.data.message.id));
  return { webhooks, sent };
}

async function run(baseUrl: string, options: { signal?: AbortSignal } = {}) {
  const { webhooks, sent } = receiver();
  const chat = createChatClient({ baseUrl, apiKey: KEY, retry: false });
  const outcome = await reconcile({ webhooks, chat, ...parts, since: T * 1000, until: (T + 5000) * 1000, ...options }).then(
    (report) => ({ report, error: undefined }),
    (error: unknown) => ({ report: undefined, error }),
  );
  return { ...outcome, sent };
}

describe('reconcile against a hostile list', () => {
  it('a meta.next that goes back to the start of a page spanning many seconds: stops, each event handled once', async () => {
    // The same full page, seconds T..T+999, every time, and next pointing back at T.
    const data = page(5000, 1000, (i) => T + i);
    const server = await hostile(() => ({ body: JSON.stringify({ data, meta: { next: { sentAt: T, id: 5000, affix: 'append' } } }) }));
    const { error, sent } = await run(server.baseUrl);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('pagination_loop');
    expect(sent.length).toBe(1000);
    expect(server.calls()).toBeLessThan(5);
  });

  it('pages of the same 1 000 repeats whose next.id changes every time: stops, each handled once', async () => {
    const data = page(5000, 1000, () => T);
    const server = await hostile((_url, calls) => ({ body: JSON.stringify({ data, meta: { next: { sentAt: T, id: 10_000 + calls } } }) }));
    const { error, sent } = await run(server.baseUrl);
    expect((error as ApiError).code).toBe('pagination_loop');
    expect(sent.length).toBe(1000);
    expect(server.calls()).toBeLessThan(5);
  });

  it('a kind of its own for every message, or a kind of 100 KB: the report names 50 kinds at most, each short', async () => {
    const data = page(5000, 1000, () => T).map((message, i) => ({ ...message, category: i === 0 ? 'x'.repeat(100_000) : `weird${i}` }));
    const server = await hostile(() => ({ body: JSON.stringify({ data, meta: { next: null } }) }));
    const { report } = await run(server.baseUrl);
    expect(report!.skipped).toBe(1000);
    const kinds = Object.keys(report!.skippedByKind);
    expect(kinds.length).toBeLessThanOrEqual(51);
    expect(Math.max(...kinds.map((kind) => kind.length))).toBeLessThanOrEqual(65);
    expect(Object.values(report!.skippedByKind).reduce((sum, count) => sum + count, 0)).toBe(1000);
  });

  it('messages of kinds named like Object.prototype\'s members are counted as numbers', async () => {
    const kinds = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
    const data = page(5000, 8, () => T).map((message, i) => ({ ...message, category: kinds[i % 4] }));
    const server = await hostile(() => ({ body: JSON.stringify({ data, meta: { next: null } }) }));
    const { report } = await run(server.baseUrl);
    expect(report!.skipped).toBe(8);
    expect(JSON.parse(JSON.stringify(report!.skippedByKind))).toEqual({ constructor: 2, toString: 2, ['__proto__']: 2, hasOwnProperty: 2 });
  });

  it('a list that makes up new ids of one second for ever: the walk stops at MAX_SECOND_IDS, not at the memory limit', async () => {
    // Each call: the next 1 000 ids, all of second T, next.id the last of them.
    const server = await hostile((url) => {
      const first = Number(url.searchParams.get('id') ?? 0) + 1;
      return { body: JSON.stringify({ data: page(first, 1000, () => T), meta: { next: { sentAt: T, id: first + 999 } } }) };
    });
    const chat = createChatClient({ baseUrl: server.baseUrl, apiKey: KEY, retry: false });
    let seen = 0;
    const walking = (async () => {
      for await (const _message of walkMessages(chat, { fromSecond: T, toSecond: T + 10 })) seen++;
    })();
    const error = await walking.then(() => undefined, (cause: unknown) => cause);
    expect((error as ApiError).code).toBe('pagination_loop');
    expect(seen).toBe(MAX_SECOND_IDS);
  }, 20_000);

  it('pages past until (a list that ignores toTimestamp): the walk ends at until', async () => {
    // Each call answers a full page of the 1000 seconds after the one asked for, for ever.
    const server = await hostile((url) => {
      const from = Number(url.searchParams.get('fromTimestamp'));
      const data = page(from * 10, 1000, (i) => from + i);
      return { body: JSON.stringify({ data, meta: { next: { sentAt: from + 1000, id: from * 10 + 999 } } }) };
    });
    const { report, error } = await run(server.baseUrl);
    expect(error).toBeUndefined();
    expect(report!.listed).toBe(5001);
    expect(server.calls()).toBeLessThanOrEqual(7);
  });

  it('a meta.next whose sentAt is not a number: an ApiError, not a walk from NaN', async () => {
    const data = page(5000, 1000, () => T);
    const server = await hostile(() => ({ body: JSON.stringify({ data, meta: { next: { sentAt: 'soon', id: 'x' } } }) }));
    const { error } = await run(server.baseUrl);
    expect(error).toBeInstanceOf(ApiError);
    expect(server.calls()).toBe(1);
  });

  it('a Retry-After of 10^6 s is not waited for: the 429 is thrown at once', async () => {
    const server = await hostile(() => ({ status: 429, headers: { 'retry-after': '1000000' }, body: '{}' }));
    const started = Date.now();
    const { error } = await run(server.baseUrl);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((error as ApiError).status).toBe(429);
    expect(server.calls()).toBe(1);
  });

  it('a Retry-After of 10^9 s (past the range of setTimeout) is not turned into a tight loop of retries', async () => {
    const server = await hostile(() => ({ status: 429, headers: { 'retry-after': '1000000000' }, body: '{}' }));
    const { error } = await run(server.baseUrl);
    expect((error as ApiError).status).toBe(429);
    expect(server.calls()).toBe(1);
  });

  it('a negative or a past-date Retry-After: waited as the default, bounded by the 429 limit', async () => {
    const server = await hostile((_url, calls) =>
      calls === 1 ? { status: 429, headers: { 'retry-after': '-5' }, body: '{}' }
      : calls === 2 ? { status: 429, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, body: '{}' }
      : { body: JSON.stringify({ data: page(5000, 2, () => T), meta: { next: null } }) },
    );
    const { report, error } = await run(server.baseUrl);
    expect(error).toBeUndefined();
    expect(report).toMatchObject({ listed: 2, recovered: 2, throttled: 2 });
  });

  it('the signal ends a Retry-After wait at once', async () => {
    const server = await hostile(() => ({ status: 429, headers: { 'retry-after': '30' }, body: '{}' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 200);
    const started = Date.now();
    const { error } = await run(server.baseUrl, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((error as Error).message).toBe('stop');
  });

  it('a body that is not JSON, one naming the key: an ApiError that does not', async () => {
    const server = await hostile(() => ({ headers: { 'content-type': 'text/html' }, body: `<html>oops ${KEY}</html>` }));
    const { error } = await run(server.baseUrl);
    expect(error).toBeInstanceOf(ApiError);
    expect(JSON.stringify({ message: (error as Error).message, ...(error as ApiError).toJSON() })).not.toContain(KEY);
  });
});
