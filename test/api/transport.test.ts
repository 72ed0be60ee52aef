/**
 * The transport's own rules (src/api/transport.ts), through a client and a fetch double that answers what
 * each case needs: URLs and query strings, how a body is read (JSON or text), which header names a request
 * id, what an error's message says the service said, what the logger is told, and options refused at creation.
 * chat-client.test.ts checks the same client against a real server.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type ApiError, ValidationError, createChatClient } from '../../src/api/index.js';

const apiKey = 'sk-transport-0c4f7a2e91';
const baseUrl = 'https://platform.test/v3';

/** A client whose fetch records each URL and answers with `answer()`. */
function client(answer: () => Response, options: Record<string, unknown> = {}) {
  const urls: string[] = [];
  const chat = createChatClient({
    apiKey,
    baseUrl,
    retry: 0,
    fetch: async (input) => {
      urls.push(String(input));
      return answer();
    },
    ...options,
  } as Parameters<typeof createChatClient>[0]);
  return { chat, urls };
}

const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('should have failed'), (error: unknown) => error as ApiError);

describe('request URLs', () => {
  it('repeats a key for an array, leaves out undefined and null, and appends to a path that has a query', async () => {
    const { chat, urls } = client(() => Response.json({}));
    await chat.request('GET', '/users', { query: { uid: ['a', 'b'], page: 2, active: true, gone: undefined, none: null } });
    await chat.request('GET', '/users?sort=name', { query: { page: 1 } });
    await chat.request('GET', '/users?sort=name', { query: { none: null } });
    expect(urls).toEqual([`${baseUrl}/users?uid=a&uid=b&page=2&active=true`, `${baseUrl}/users?sort=name&page=1`, `${baseUrl}/users?sort=name`]);
  });

  it('refuses a path without a leading slash or with two, before any request', async () => {
    const { chat, urls } = client(() => Response.json({}));
    await expect(chat.request('GET', 5 as never)).rejects.toThrow(new ValidationError('createChatClient: a request path starts with one "/" and is relative to the base URL (got 5).'));
    for (const path of ['users', '//evil.example/x', 'https://evil.example/x']) {
      await expect(chat.request('GET', path)).rejects.toThrow(new ValidationError(`createChatClient: a request path starts with one "/" and is relative to the base URL (got ${JSON.stringify(path)}).`));
    }
    expect(urls).toEqual([]);
  });

  it('sends a lower-case method upper-cased, with the body as JSON', async () => {
    let seen: RequestInit | undefined;
    const chat = createChatClient({ apiKey, baseUrl, retry: 0, fetch: async (_input, init) => ((seen = init), Response.json({ ok: 1 })) });
    await expect(chat.request('post', '/messages', { body: { text: 'hi' } })).resolves.toEqual({ ok: 1 });
    expect([seen?.method, seen?.body]).toEqual(['POST', '{"text":"hi"}']);
  });
});

describe('answer bodies', () => {
  it('parses JSON whatever the case of its type, and JSON-looking text without a type', async () => {
    for (const answer of [
      () => new Response('{"data":[]}', { headers: { 'content-type': 'Application/JSON; charset=utf-8' } }),
      () => new Response(' [1, 2]', { headers: { 'content-type': 'text/plain' } }),
    ]) {
      const { chat } = client(answer);
      expect(await chat.request('GET', '/x')).toEqual(JSON.parse(await answer().text()));
    }
  });

  it('keeps an error body declared JSON that is not, as text cut at 2 000 characters', async () => {
    const text = `{not json ${'x'.repeat(3_000)}`;
    const { chat } = client(() => new Response(text, { status: 400, headers: { 'content-type': 'application/json' } }));
    const error = await failure(chat.request('GET', '/x'));
    expect(error.body).toBe(`${text.slice(0, 2_000)}…`);
    expect(error.message).toBe(`GET ${baseUrl}/x answered 400: ${text.slice(0, 200)}`);
  });

  it('a 2xx answer that is text is invalid_response', async () => {
    const { chat } = client(() => new Response('OK', { status: 200 }));
    await expect(failure(chat.request('GET', '/x'))).resolves.toMatchObject({ code: 'invalid_response', status: 200, body: 'OK', message: `GET ${baseUrl}/x answered 200 with a body that is not JSON` });
  });
});

describe('error messages', () => {
  const error = (status: number, body: unknown, init: ResponseInit = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return failure(client(() => new Response(text, { status, ...init })).chat.request('GET', '/x'));
  };

  it('says what the service said: error.message, message, or error as text, cut at 200 characters', async () => {
    expect((await error(400, { error: { message: 'nested' }, message: 'outer' })).message).toBe(`GET ${baseUrl}/x answered 400: nested`);
    expect((await error(400, { error: { code: 1 }, message: 'outer' })).message).toBe(`GET ${baseUrl}/x answered 400: outer`);
    expect((await error(400, { error: 'plain' })).message).toBe(`GET ${baseUrl}/x answered 400: plain`);
    expect((await error(400, { message: 42 })).message).toBe(`GET ${baseUrl}/x answered 400`);
    expect((await error(400, [1])).message).toBe(`GET ${baseUrl}/x answered 400`);
    expect((await error(400, { message: 'm'.repeat(300) })).message).toBe(`GET ${baseUrl}/x answered 400: ${'m'.repeat(200)}`);
  });

  it('names the status text when there is one', async () => {
    expect((await error(418, '', { statusText: 'Teapot' })).message).toBe(`GET ${baseUrl}/x answered 418 Teapot`);
    expect((await error(418, '')).body).toBeUndefined();
  });

  it('takes the request id from the first of the usual headers, cut at 200 characters', async () => {
    for (const name of ['x-request-id', 'request-id', 'x-amzn-requestid', 'x-correlation-id', 'cf-ray']) {
      expect((await error(500, '', { headers: { [name]: `id-${name}` } })).requestId).toBe(`id-${name}`);
    }
    expect((await error(500, '', { headers: { 'request-id': 'second', 'x-request-id': 'first' } })).requestId).toBe('first');
    expect((await error(500, '', { headers: { 'x-request-id': 'r'.repeat(300) } })).requestId).toBe(`${'r'.repeat(200)}…`);
    expect('requestId' in JSON.parse(JSON.stringify(await error(500, '')))).toBe(false);
  });

  it('a network failure names its cause and the cause of that', async () => {
    const failing = createChatClient({
      apiKey,
      baseUrl,
      retry: 0,
      fetch: async () => {
        throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
      },
    });
    const thrown = await failure(failing.request('POST', '/m'));
    expect(thrown).toMatchObject({ code: 'network', status: 0, attempts: 1, message: `POST ${baseUrl}/m failed before an answer arrived: fetch failed (connect ECONNREFUSED 127.0.0.1:9)` });
    const plain = createChatClient({ apiKey, baseUrl, retry: 0, fetch: () => Promise.reject('down') });
    expect((await failure(plain.request('GET', '/m'))).message).toBe(`GET ${baseUrl}/m failed before an answer arrived: down`);
    const bare = createChatClient({ apiKey, baseUrl, retry: 0, fetch: () => Promise.reject(new Error('boom')) });
    expect((await failure(bare.request('GET', '/m'))).message).toBe(`GET ${baseUrl}/m failed before an answer arrived: boom`);
  });
});

describe('logging', () => {
  it('logs each attempt at debug and each retry at warn, with the fields a log needs and no key', async () => {
    const records: Array<[string, Record<string, unknown>, string | undefined]> = [];
    const logger = {
      debug: (fields: Record<string, unknown>, message?: string) => records.push(['debug', fields, message]),
      warn: (fields: Record<string, unknown>, message?: string) => records.push(['warn', fields, message]),
    };
    const answers = [() => new Response('', { status: 503, headers: { 'retry-after': '0' } }), () => Response.json({ data: [] })];
    const { chat } = client(() => answers.shift()!(), { logger, retry: 1 });
    await chat.request('GET', '/users', { query: { key: apiKey } });
    const url = `${baseUrl}/users?key=[redacted]`;
    for (const [level, fields] of records) if (level === 'debug') expect(fields.ms as number).toBeGreaterThanOrEqual(0), expect(fields.ms as number).toBeLessThan(30_000);
    expect(records.map(([level, fields, message]) => [level, message, level === 'debug' ? { ...fields, ms: typeof fields.ms } : fields])).toEqual([
      ['debug', 'platform call', { method: 'GET', url, status: 503, attempt: 1, ms: 'number' }],
      ['warn', 'retrying platform call', { method: 'GET', url, code: 'http', status: 503, attempt: 1, delayMs: 0 }],
      ['debug', 'platform call', { method: 'GET', url, status: 200, attempt: 2, ms: 'number' }],
    ]);
  });

  it('takes a logger with neither method, or with debug only, through a retry', async () => {
    for (const logger of [{}, { debug: () => undefined }]) {
      const answers = [() => new Response('', { status: 503, headers: { 'retry-after': '0' } }), () => Response.json({ ok: true })];
      const { chat } = client(() => answers.shift()!(), { logger, retry: 1 });
      await expect(chat.request('GET', '/x')).resolves.toEqual({ ok: true });
    }
  });
});

describe('options', () => {
  it('refuses a timeoutMs that is not a positive finite number, and a fetch that is not a function', () => {
    for (const timeoutMs of [0, -5, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => createChatClient({ apiKey, baseUrl, timeoutMs })).toThrow(new ValidationError('createChatClient: timeoutMs must be a positive number of milliseconds.'));
    }
    expect(() => createChatClient({ apiKey, baseUrl, timeoutMs: 0.5 })).not.toThrow();
    expect(() => createChatClient({ apiKey, baseUrl, fetch: 'fetch' as never })).toThrow(new ValidationError('createChatClient: no fetch available; pass options.fetch.'));
  });
});

describe('retries, time limits and the caller\'s signal', () => {
  it('waits for a Retry-After exactly as long as maxRetryAfterMs', async () => {
    const answers = [() => new Response('', { status: 429, headers: { 'retry-after': '0' } }), () => Response.json({ ok: true })];
    const { chat } = client(() => answers.shift()!(), { retry: { retries: 1, maxRetryAfterMs: 0 } });
    await expect(chat.request('POST', '/x')).resolves.toEqual({ ok: true });
  });

  it('a signal aborted before the call: the fetch gets an aborted signal, nothing is retried, the caller is named', async () => {
    const seen: boolean[] = [];
    const chat = createChatClient({ apiKey, baseUrl, retry: 2, fetch: async (_input, init) => {
      // As fetch does: an aborted signal rejects at once.
      seen.push(init!.signal!.aborted);
      if (init!.signal!.aborted) throw init!.signal!.reason;
      return Response.json({});
    } });
    const error = await failure(chat.request('GET', '/x', { signal: AbortSignal.abort(new Error('user left')) }));
    expect(seen).toEqual([true]);
    expect(error).toMatchObject({ code: 'aborted', attempts: 1, message: `GET ${baseUrl}/x was aborted by the caller` });
  });

  it('a GET aborted during its fetch is not retried, and leaves no listener on the signal', async () => {
    let calls = 0;
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        calls++;
        init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
      });
    const controller = new AbortController();
    const warned: unknown[] = [];
    const chat = createChatClient({ apiKey, baseUrl, retry: { retries: 2, minDelayMs: 1 }, fetch: hanging, logger: { warn: (fields) => warned.push(fields) } });
    const pending = failure(chat.request('GET', '/x', { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('stop')), 5);
    expect(await pending).toMatchObject({ code: 'aborted', attempts: 1 });
    expect(calls).toBe(1);
    expect(warned).toEqual([]); // no retry announced either
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const ok = new AbortController();
    await client(() => Response.json({})).chat.request('GET', '/x', { signal: ok.signal });
    expect(getEventListeners(ok.signal, 'abort')).toHaveLength(0);
  });

  it('a timeout names the limit, in the message and in the cause', async () => {
    const hanging: typeof fetch = (_input, init) => new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    const chat = createChatClient({ apiKey, baseUrl, retry: 0, timeoutMs: 30, fetch: hanging });
    const error = await failure(chat.request('GET', '/x'));
    expect(error).toMatchObject({ code: 'timeout', message: `GET ${baseUrl}/x got no complete answer within 30 ms` });
    expect((error.cause as Error).message).toBe('no answer within 30 ms');
  });

  it('an abort while waiting to retry: code aborted, the attempts made so far', async () => {
    const controller = new AbortController();
    const { chat } = client(() => new Response('', { status: 503, headers: { 'retry-after': '30' } }), { retry: 2 });
    const pending = failure(chat.request('GET', '/x', { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('stop')), 20);
    expect(await pending).toMatchObject({ code: 'aborted', attempts: 1, message: `GET ${baseUrl}/x was aborted by the caller` });
  });
});

describe('what an answer says', () => {
  const answered = (status: number, text: string, type: string) => failure(client(() => new Response(text, { status, headers: { 'content-type': type } })).chat.request('GET', '/x'));

  it('a JSON number or null is JSON when declared so; the same text undeclared is text', async () => {
    expect((await answered(400, '42', 'application/json')).body).toBe(42);
    expect((await answered(400, '42', 'text/plain')).body).toBe('42');
    expect(await answered(400, 'null', 'application/json')).toMatchObject({ code: 'http', body: null, message: `GET ${baseUrl}/x answered 400` });
  });

  it('an unexpected 2xx body names the paths that are wrong, (root) for the whole', async () => {
    const list = (body: unknown) => failure(client(() => Response.json(body)).chat.users.list());
    expect((await list({ data: 'x' })).message).toBe(`GET ${baseUrl}/users answered 200 with an unexpected body (data)`);
    expect((await list([])).message).toBe(`GET ${baseUrl}/users answered 200 with an unexpected body ((root))`);
    expect((await list({ data: [{ uid: 5 }, { uid: 6 }] })).message).toBe(`GET ${baseUrl}/users answered 200 with an unexpected body (data.0.uid, data.1.uid)`);
  });

  it('an answer too long that declared no length does not say it declared one', async () => {
    const { chat } = client(() => new Response('x'.repeat(100)), { maxResponseBytes: 10 });
    const error = await failure(chat.request('GET', '/x'));
    expect(error.message).toBe(`GET ${baseUrl}/x answered with more than maxResponseBytes (10 bytes); the connection was closed`);
  });
});
