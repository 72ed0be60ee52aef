/**
 * Intake and admission at their edges: body readers that throw or answer synchronously, the size limit on
 * bodies already in memory, the error context of a failed commit, the keys of byte bodies, and refusals
 * during shutdown (found by mutation testing, tools/mutation/results.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { BodyArrival, createWebhooks, memoryInbox, WebhookError, type ParsedWebhook, type WebhooksOptions } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';
import type { Inbox } from '../../src/delivery/port.js';

const auth = { username: 'platform', password: 's3cret' };
const headers = { 'content-type': 'application/json', authorization: basicAuthHeader(auth.username, auth.password) };
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const body = fixture('message_sent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function receiver(options: Partial<WebhooksOptions> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  const errors: WebhookError[] = [];
  const handled: string[] = [];
  webhooks.onError((error) => void errors.push(error));
  webhooks.on('message_sent', (event) => void handled.push(event.trigger));
  webhooks.onUnknown((event) => void handled.push(event.trigger));
  return { webhooks, errors, handled };
}

/** An inbox whose put fails with `failure`: the memory inbox otherwise. */
function failingInbox(failure: unknown): Inbox {
  const inbox = memoryInbox();
  const put = async () => Promise.reject(failure);
  return new Proxy(inbox, {
    get: (target, name) => {
      if (name === 'put') return put;
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Inbox;
}

describe('body readers', () => {
  it('a reader that throws synchronously is answered 400 invalid_json, the cause reaching onError', async () => {
    const { webhooks, errors } = receiver();
    const cause = new Error('socket gone');
    const response = await webhooks.handle({
      method: 'POST',
      headers,
      body: () => {
        throw cause;
      },
    });
    expect(response.status).toBe(400);
    await response.done;
    expect(errors).toHaveLength(1);
    expect(errors[0]!).toMatchObject({ code: 'invalid_json', cause });
  });

  it('a missing body (null or undefined) is an empty one: 400 invalid_json saying so', async () => {
    const { webhooks, errors } = receiver();
    for (const missing of [null, undefined]) {
      const response = await webhooks.handle({ method: 'POST', headers, body: missing });
      expect(response.status).toBe(400);
      await response.done;
    }
    const readerOfNothing = await webhooks.handle({ method: 'POST', headers, body: async () => null as never });
    expect(readerOfNothing.status).toBe(400);
    await readerOfNothing.done;
    expect(errors.map((error) => error.message)).toEqual(Array(3).fill('The body is not valid JSON: the body is empty.'));
  });

  it('a BodyArrival: answered when the adapter says the body arrived, and only the first word counts', async () => {
    const { webhooks, handled } = receiver();
    const arrival = new BodyArrival();
    const sent: number[] = [];
    webhooks.respond({ method: 'POST', headers, body: () => arrival }, (response) => void sent.push(response.status));
    await Promise.resolve();
    expect(sent).toEqual([]);
    expect(arrival.pending).toBe(true);
    arrival.arrive(body);
    expect(arrival.pending).toBe(false);
    expect(sent).toEqual([200]); // at once, no turn of the microtask queue in between
    arrival.fail(new Error('too late'));
    arrival.arrive('{}');
    expect(sent).toEqual([200]);
    await sleep(5);
    expect(handled).toEqual(['message_sent']);
  });

  it('a BodyArrival that fails is answered 400 invalid_json with its cause; one that already arrived is answered at once', async () => {
    const { webhooks, errors } = receiver();
    const cause = new Error('connection reset');
    const failing = new BodyArrival();
    const failed = webhooks.handle({ method: 'POST', headers, body: () => failing });
    failing.fail(cause);
    failing.arrive(body);
    expect((await failed).status).toBe(400);
    await (await failed).done;
    expect(errors[0]!).toMatchObject({ code: 'invalid_json', cause });

    const ready = new BodyArrival();
    ready.arrive(body.replace('"id"', '"other": 1, "id"'));
    const sent: number[] = [];
    webhooks.respond({ method: 'POST', headers, body: () => ready }, (response) => void sent.push(response.status));
    expect(sent).toEqual([200]);
  });

  it('a BodyArrival that never arrives is answered 408 at the body deadline', async () => {
    const { webhooks, errors } = receiver({ bodyTimeoutMs: 30 });
    const response = await webhooks.handle({ method: 'POST', headers, body: () => new BodyArrival() });
    expect(response.status).toBe(408);
    await response.done;
    expect(errors.map((error) => error.code)).toEqual(['body_timeout']);
  });

  it('a reader that rejects is answered 400 invalid_json with its cause', async () => {
    const { webhooks, errors } = receiver();
    const cause = new Error('reset');
    const response = await webhooks.handle({ method: 'POST', headers, body: async () => Promise.reject(cause) });
    expect(response.status).toBe(400);
    await response.done;
    expect(errors[0]!).toMatchObject({ code: 'invalid_json', cause });
  });

  it('a reader that returns the body synchronously is answered synchronously, with the limit passed to it', () => {
    const { webhooks } = receiver({ maxBodyBytes: 4096 });
    const reader = vi.fn(() => body);
    const sent: number[] = [];
    webhooks.respond({ method: 'POST', headers, body: reader as never }, (response) => void sent.push(response.status));
    expect(sent).toEqual([200]);
    expect(reader).toHaveBeenCalledWith(4096);
  });

  it('a reader is not called after close(): the request is refused before its body', async () => {
    const { webhooks } = receiver();
    await webhooks.close({ timeoutMs: 10 });
    const reader = vi.fn(async () => body);
    const response = await webhooks.handle({ method: 'POST', headers, body: reader });
    expect(response.status).toBe(503);
    expect(reader).not.toHaveBeenCalled();
  });

  it('after close(), even a request that would be refused otherwise gets 503 (retry elsewhere)', async () => {
    const { webhooks } = receiver();
    await webhooks.close({ timeoutMs: 10 });
    expect((await webhooks.handle({ method: 'GET', headers: {}, body })).status).toBe(503);
    expect((await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(503);
  });
});

describe('admission refusals say what was wrong, briefly', () => {
  it('405 names the method to use', async () => {
    const { webhooks } = receiver();
    const response = await webhooks.handle({ method: 'PUT', headers, body });
    expect(response).toMatchObject({ status: 405, body: 'Webhook deliveries must use POST.' });
    expect((await webhooks.handle({ method: 'post', headers, body })).status).toBe(200);
  });

  it('415 quotes a wrong Content-Type or Content-Encoding, cut to 100 characters', async () => {
    const { webhooks, errors } = receiver();
    const long = `text/${'x'.repeat(200)}`;
    const type = await webhooks.handle({ method: 'POST', headers: { ...headers, 'content-type': long }, body });
    expect(type.status).toBe(415);
    expect(type.body).toBe(`Webhook deliveries are JSON; got Content-Type "${long.slice(0, 100)}".`);
    const encoding = `gzip${'z'.repeat(200)}`;
    const compressed = await webhooks.handle({ method: 'POST', headers: { ...headers, 'content-encoding': encoding }, body });
    expect(compressed.status).toBe(415);
    expect(compressed.body).toBe(`Webhook deliveries are not compressed; got Content-Encoding "${encoding.slice(0, 100)}".`);
    await Promise.all([type.done, compressed.done]);
    expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type', 'unsupported_media_type']);
  });
});

describe('maxBodyBytes on a body already in memory', () => {
  const ascii = (length: number) => {
    const envelope = JSON.stringify({ trigger: 'poll_voted', data: { t: '' } });
    return envelope.replace('""', JSON.stringify('x'.repeat(length - envelope.length)));
  };

  it('an ASCII string of exactly the limit passes, one byte more is 413', async () => {
    const { webhooks } = receiver({ maxBodyBytes: 300 });
    expect(ascii(300)).toHaveLength(300);
    expect((await webhooks.handle({ method: 'POST', headers, body: ascii(300) })).status).toBe(200);
    expect((await webhooks.handle({ method: 'POST', headers, body: ascii(301) })).status).toBe(413);
  });

  it('a declared Content-Length of exactly the limit is admitted, one byte more is 413 before the body is read', async () => {
    const { webhooks } = receiver({ maxBodyBytes: 300 });
    const declared = (length: number) => ({ ...headers, 'content-length': String(length) });
    expect((await webhooks.handle({ method: 'POST', headers: declared(300), body: ascii(300) })).status).toBe(200);
    const read = vi.fn(() => ascii(301));
    expect((await webhooks.handle({ method: 'POST', headers: declared(301), body: read })).status).toBe(413);
    expect(read).not.toHaveBeenCalled();
  });

  it('multi-byte text is measured in UTF-8 bytes at the boundary', async () => {
    const { webhooks } = receiver({ maxBodyBytes: 300 });
    // 99 'é' (2 bytes each) fill 198 bytes: pad to exactly 300 bytes, then one over.
    const text = (extra: number) => {
      const envelope = JSON.stringify({ trigger: 'poll_voted', data: { t: 'é'.repeat(99) } });
      return envelope.replace('"}}', `${'x'.repeat(300 - Buffer.byteLength(envelope) + extra)}"}}`);
    };
    expect(Buffer.byteLength(text(0))).toBe(300);
    expect((await webhooks.handle({ method: 'POST', headers, body: text(0) })).status).toBe(200);
    expect((await webhooks.handle({ method: 'POST', headers, body: text(1) })).status).toBe(413);
  });

  it('Uint8Array and ArrayBuffer bodies: exactly the limit passes, one byte more is 413', async () => {
    const { webhooks } = receiver({ maxBodyBytes: 300 });
    const bytes = (length: number) => new TextEncoder().encode(ascii(length));
    expect((await webhooks.handle({ method: 'POST', headers, body: bytes(300) })).status).toBe(200);
    expect((await webhooks.handle({ method: 'POST', headers, body: bytes(301) })).status).toBe(413);
    const buffer = (length: number) => bytes(length).slice().buffer;
    expect((await webhooks.handle({ method: 'POST', headers, body: buffer(299) })).status).toBe(200);
    expect((await webhooks.handle({ method: 'POST', headers, body: buffer(301) })).status).toBe(413);
  });

  it('a body that a reader returns over the limit is 413 too (a reader that did not stop)', async () => {
    const { webhooks, errors } = receiver({ maxBodyBytes: 300 });
    const response = await webhooks.handle({ method: 'POST', headers, body: async () => new TextEncoder().encode(ascii(400)) });
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    await response.done;
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('a pre-parsed body has no size to check: it passes', async () => {
    const { webhooks, handled } = receiver({ maxBodyBytes: 10 });
    const response = await webhooks.handle({ method: 'POST', headers, body: JSON.parse(body) as object });
    expect(response.status).toBe(200);
    await response.done;
    expect(handled).toEqual(['message_sent']);
  });
});

describe('a commit that fails', () => {
  it('an inbox rejecting with a WebhookError: onError gets its code, its cause, the event and the raw body', async () => {
    const root = new Error('disk full');
    const { webhooks, errors } = receiver({ inbox: failingInbox(new WebhookError('inbox_failed', 'store broke', { cause: root })), consume: false });
    const response = await webhooks.handle({ method: 'POST', headers, body });
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    await response.done;
    expect(errors).toHaveLength(1);
    expect(errors[0]!).toMatchObject({ code: 'inbox_failed', message: 'store broke', cause: root, rawBody: body });
    expect(errors[0]!.event).toMatchObject({ trigger: 'message_sent' });
  });

  it('a WebhookError without a cause becomes the cause itself', async () => {
    const failure = new WebhookError('inbox_failed', 'no cause');
    const { webhooks, errors } = receiver({ inbox: failingInbox(failure), consume: false });
    await (await webhooks.handle({ method: 'POST', headers, body })).done;
    expect(errors[0]!.cause).toBe(failure);
  });

  it('any other failure is inbox_failed with that cause', async () => {
    const failure = new TypeError('broken');
    const { webhooks, errors } = receiver({ inbox: failingInbox(failure), consume: false });
    const response = await webhooks.handle({ method: 'POST', headers, body });
    expect(response.status).toBe(503);
    await response.done;
    expect(errors[0]!).toMatchObject({ code: 'inbox_failed', cause: failure, rawBody: body, message: 'The event could not be stored; retry later.' });
  });

  it('an enqueue that rejects reaches onError as enqueue_failed with the rejection as its cause', async () => {
    const { webhooks, errors } = receiver();
    const failure = new Error('queue down');
    const response = await webhooks.handle({ method: 'POST', headers, body }, { enqueue: async () => Promise.reject(failure) });
    expect(response.status).toBe(503);
    await response.done;
    expect(errors[0]!).toMatchObject({ code: 'enqueue_failed', cause: failure, rawBody: body });
  });
});

describe('keys of byte bodies', () => {
  // Two bodies differing only in invalid UTF-8 bytes decode to the same text; they are still different bytes.
  const withByte = (byte: number) => {
    const text = new TextEncoder().encode('{"trigger":"poll_voted","data":{"t":"?"}}');
    text[text.indexOf('?'.charCodeAt(0))] = byte;
    return text;
  };

  it('an enqueue keys by the exact bytes, and one enqueue function keeps its memory of forwarded keys', async () => {
    const { webhooks } = receiver();
    const enqueue = vi.fn(async (_event: ParsedWebhook) => undefined);
    expect(new TextDecoder().decode(withByte(0xff))).toBe(new TextDecoder().decode(withByte(0xfe)));
    expect((await webhooks.handle({ method: 'POST', headers, body: withByte(0xff) }, { enqueue })).status).toBe(200);
    expect((await webhooks.handle({ method: 'POST', headers, body: withByte(0xfe) }, { enqueue })).status).toBe(200);
    expect(enqueue).toHaveBeenCalledTimes(2);
    // The same bytes again: forwarded once only, for this enqueue function.
    expect((await webhooks.handle({ method: 'POST', headers, body: withByte(0xff) }, { enqueue })).status).toBe(200);
    expect(enqueue).toHaveBeenCalledTimes(2);
    const other = vi.fn(async (_event: ParsedWebhook) => undefined);
    await webhooks.handle({ method: 'POST', headers, body: withByte(0xff) }, { enqueue: other });
    expect(other).toHaveBeenCalledTimes(1);
  });

  it('the duplicate window keys by the exact bytes too', async () => {
    const { webhooks, handled } = receiver();
    await (await webhooks.handle({ method: 'POST', headers, body: withByte(0xff) })).done;
    await (await webhooks.handle({ method: 'POST', headers, body: withByte(0xfe) })).done;
    await (await webhooks.handle({ method: 'POST', headers, body: withByte(0xff) })).done;
    expect(handled).toEqual(['poll_voted', 'poll_voted']);
  });
});

describe('answers that fail, app refusals, closing during a commit', () => {
  it('a body that arrives later and whose answer fails is still answered, 500, with the failure logged', async () => {
    const logged: unknown[] = [];
    const webhooks = createWebhooks({
      auth,
      logger: {
        debug: () => {
          throw new Error('log sink down');
        },
        error: (fields: unknown) => void logged.push(fields),
      },
    });
    // Not JSON: the refusal's debug line throws inside the answer.
    const response = await webhooks.handle({ method: 'POST', headers, body: async () => '{' });
    expect([response.status, response.body]).toEqual([500, 'Internal error.']);
    expect(logged).toEqual([{ reason: 'log sink down' }]);
    await webhooks.close();
  });

  it('an appId that is not one of the credentials is quoted in the refusal, cut to 100 characters', async () => {
    const bound = { username: 'acme', password: 'acme-secret', appId: 'app-acme' };
    const webhooks = createWebhooks({ auth: [bound], logger: {} });
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const appId = `app-${'x'.repeat(300)}`;
    const response = await webhooks.handle({
      method: 'POST',
      headers: { ...headers, authorization: basicAuthHeader(bound.username, bound.password) },
      body: JSON.stringify({ ...(JSON.parse(body) as object), appId }),
    });
    expect(response.status).toBe(403);
    await response.done;
    expect(errors.map((error) => error.message)).toEqual([
      `The delivery's appId ${JSON.stringify(appId.slice(0, 100))} is not an app its credentials are bound to (auth[].appId).`,
    ]);
  });

  it('close() lets a request waiting for its commit have its answer before the inbox is closed', async () => {
    const inbox = memoryInbox();
    const order: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowInbox = new Proxy(inbox, {
      get: (target, name) => {
        if (name === 'put') return async (...args: Parameters<Inbox['put']>) => (order.push('put'), await gate, target.put(...args));
        if (name === 'close') return async () => (order.push('close'), target.close());
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Inbox;
    const webhooks = createWebhooks({ auth, logger: {}, inbox: slowInbox, consume: false });
    const answer = webhooks.handle({ method: 'POST', headers, body });
    for (let i = 0; i < 100 && order.length === 0; i++) await sleep(1);
    expect(order).toEqual(['put']);
    const closing = webhooks.close({ timeoutMs: 0 });
    await sleep(20);
    expect(order).toEqual(['put']);
    release();
    expect((await answer).status).toBe(200);
    await closing;
    expect(order).toEqual(['put', 'close']);
  });
});
