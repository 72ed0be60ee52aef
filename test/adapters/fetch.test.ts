import { describe, expect, it } from 'vitest';
import { fetchHandler, type FetchHandlerOptions } from '../../adapters/fetch/index.js';
import type { Webhooks } from '../../src/index.js';
import { AUTH, LIMIT, fixture, messageOfSize, recordingReceiver, settle, statusTableSuite, type Send } from './status-table.js';

const URL_BASE = 'https://hooks.example.com';

function sender(webhooks: Webhooks, options?: FetchHandlerOptions, path = '/webhooks'): Send {
  const handler = fetchHandler(webhooks, options);
  return async (request) => {
    const body = typeof request.body === 'string' || request.body === undefined ? request.body : new Uint8Array(request.body);
    const response = await handler(new Request(URL_BASE + path, { method: request.method, headers: request.headers, body }));
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  };
}

statusTableSuite('fetch', async (webhooks) => ({ send: sender(webhooks) }));

const json = { 'content-type': 'application/json', authorization: AUTH };
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A body stream without a Content-Length, counting how many chunks were pulled and whether it was cancelled. */
function countingStream(body: Uint8Array, chunkSize: number) {
  const stats = { pulled: 0, cancelled: false, chunks: Math.ceil(body.byteLength / chunkSize) };
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= body.byteLength) return controller.close();
        stats.pulled += 1;
        controller.enqueue(body.slice(offset, offset + chunkSize));
        offset += chunkSize;
      },
      cancel() {
        stats.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, stats };
}

function streamedRequest(stream: ReadableStream<Uint8Array>): Request {
  return new Request(`${URL_BASE}/webhooks`, { method: 'POST', headers: json, body: stream, duplex: 'half' } as RequestInit);
}

describe('fetch body streaming', () => {
  it('accepts a streamed body without Content-Length', async () => {
    const { webhooks, events } = recordingReceiver();
    const { stream, stats } = countingStream(new TextEncoder().encode(messageOfSize(LIMIT)), 100);
    const request = streamedRequest(stream);
    expect(request.headers.get('content-length')).toBeNull();
    expect((await fetchHandler(webhooks)(request)).status).toBe(200);
    expect(stats.pulled).toBe(stats.chunks);
    await settle();
    expect(events).toHaveLength(1);
  });

  it('answers 413 to a streamed body one byte over the limit', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const { stream } = countingStream(new TextEncoder().encode(messageOfSize(LIMIT + 1)), 100);
    expect((await fetchHandler(webhooks)(streamedRequest(stream))).status).toBe(413);
    await settle();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('stops pulling a large stream past the limit and cancels it', async () => {
    const { webhooks } = recordingReceiver();
    const { stream, stats } = countingStream(new Uint8Array(1024 * 1024).fill(0x20), 1024);
    const response = await fetchHandler(webhooks)(streamedRequest(stream));
    expect(response.status).toBe(413);
    await settle();
    // 4096 + 1 bytes take 5 chunks of 1 KiB; allow the runtime a little read-ahead, nowhere near 1024.
    expect(stats.pulled).toBeLessThanOrEqual(8);
    expect(stats.cancelled).toBe(true);
  });

  it('never reads the body of an unauthenticated request', async () => {
    const { webhooks } = recordingReceiver();
    const { stream, stats } = countingStream(new TextEncoder().encode(fixture('message_sent')), 100);
    const request = new Request(`${URL_BASE}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect((await fetchHandler(webhooks)(request)).status).toBe(401);
    expect(stats.pulled).toBe(0);
  });

  it('answers a POST that has no body at all (request.body null) 400 invalid_json, like an empty one', async () => {
    const { webhooks, errors } = recordingReceiver();
    const request = new Request(`${URL_BASE}/webhooks`, { method: 'POST', headers: json });
    expect(request.body).toBeNull();
    expect((await fetchHandler(webhooks)(request)).status).toBe(400);
    await settle();
    expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['invalid_json', '']]);
  });

  it('answers with a body something else already read as empty, not with an error', async () => {
    const { webhooks, errors } = recordingReceiver();
    const request = new Request(`${URL_BASE}/webhooks`, { method: 'POST', headers: json, body: fixture('message_sent') });
    await request.text();
    const response = await fetchHandler(webhooks)(request);
    expect(response.status).toBe(400);
    await settle();
    expect(errors[0]?.code).toBe('invalid_json');
  });
});

describe('fetch handler timing', () => {
  const delivery = () => new Request(`${URL_BASE}/webhooks`, { method: 'POST', headers: json, body: fixture('message_sent') });

  function slowReceiver(ms: number) {
    const receiver = recordingReceiver();
    const state = { finished: false };
    receiver.webhooks.on('message_sent', async () => {
      await delay(ms);
      state.finished = true;
    });
    return { ...receiver, state };
  }

  it('answers at once by default, before a slow handler has finished', async () => {
    const { webhooks, state } = slowReceiver(50);
    expect((await fetchHandler(webhooks)(delivery())).status).toBe(200);
    expect(state.finished).toBe(false);
    await delay(80);
    expect(state.finished).toBe(true);
  });

  it('hands `done` to ctx.waitUntil and answers at once', async () => {
    const { webhooks, state } = slowReceiver(50);
    const waited: Promise<unknown>[] = [];
    const response = await fetchHandler(webhooks, { awaitHandlers: true })(delivery(), {
      waitUntil: (promise) => void waited.push(promise),
    });
    expect(response.status).toBe(200);
    expect(state.finished).toBe(false);
    expect(waited).toHaveLength(1);
    await waited[0];
    expect(state.finished).toBe(true);
  });

  it('ignores a ctx without waitUntil (Next.js passes { params })', async () => {
    const { webhooks } = slowReceiver(10);
    const handler = fetchHandler(webhooks);
    const response = await (handler as (request: Request, ctx: unknown) => Promise<Response>)(delivery(), { params: Promise.resolve({}) });
    expect(response.status).toBe(200);
  });

  it('with awaitHandlers, answers once a slow handler has finished', async () => {
    const { webhooks, state } = slowReceiver(50);
    expect((await fetchHandler(webhooks, { awaitHandlers: true })(delivery())).status).toBe(200);
    expect(state.finished).toBe(true);
  });

  it('with awaitHandlers and handlerTimeoutMs, answers 200 at the budget and reports handler_timeout', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const started = Date.now();
    const response = await fetchHandler(webhooks, { awaitHandlers: true, handlerTimeoutMs: 100 })(delivery());
    const elapsed = Date.now() - started;
    expect(response.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(400);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });
});

describe('fetch path handling', () => {
  it('answers 404 to another path and dispatches nothing; matches the pathname whatever the query', async () => {
    const { webhooks, events } = recordingReceiver();
    const headers = json;
    const body = fixture('message_sent');
    const elsewhere = await sender(webhooks, { path: '/webhooks' }, '/other')({ method: 'POST', headers, body });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(elsewhere.body).toBe('Not found.');
    await settle();
    expect(events).toEqual([]);
    const here = await sender(webhooks, { path: '/webhooks' }, '/webhooks?source=chat')({ method: 'POST', headers, body });
    expect(here.status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
  });
});
