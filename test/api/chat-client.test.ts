/**
 * The chat client against a real local HTTP server standing in for the platform (platform-server.ts):
 * hosts per region, headers, pages, errors, timeouts, aborts and retries.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, DEFAULT_DOMAIN, ValidationError, createChatClient } from '../../src/api/index.js';
import { type Platform, forwardingFetch, startPlatform } from './platform-server.js';

const appId = 'app42';
const apiKey = 'sk-chat-0123456789abcdef';
const person = (region: string, n: number) => ({ uid: `${region}-${n}`, name: `User ${n}`, status: 'offline', role: 'default', metadata: { team: n % 2 } });
const users = { us: [1, 2, 3, 4, 5].map((n) => person('us', n)), eu: [1, 2].map((n) => person('eu', n)), in: [] };

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform({ appId, apiKey, key: 'k', secret: 's', users });
});
afterAll(() => platform.close());

/** A client aimed at the local platform through its base URL, failing fast. */
const local = (options: Partial<Parameters<typeof createChatClient>[0]> = {}) =>
  createChatClient({ apiKey, baseUrl: `${platform.url}/v3`, retry: { retries: 0 }, ...options } as Parameters<typeof createChatClient>[0]);

/** Nothing listens on port 2 (a privileged port no service uses): a connection there is refused. */
const CLOSED_PORT = 'http://127.0.0.1:2';

const lastRequest = () => platform.requests.at(-1)!;

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('base URL', () => {
  it.each([
    ['us', 'https://app42.api-us.example.test/v3/users'],
    ['EU', 'https://app42.api-eu.example.test/v3/users'],
    ['In', 'https://app42.api-in.example.test/v3/users'],
  ])('region %s is lower-cased into the host, and the platform answers with that region', async (region, expected) => {
    const { fetch, urls } = forwardingFetch(platform);
    const client = createChatClient({ appId, region, apiKey, domain: 'example.test', fetch });
    const page = await client.users.list();
    expect(urls).toEqual([expected]);
    expect(lastRequest().host).toBe(new URL(expected).host);
    expect(page.data.map((user) => user.uid)).toEqual(users[region.toLowerCase() as 'us' | 'eu' | 'in'].map((user) => user.uid));
  });

  it('uses the documented default domain when none is given', () => {
    expect(createChatClient({ appId: 'ABC1', region: 'eu', apiKey }).baseUrl).toBe(`https://abc1.api-eu.${DEFAULT_DOMAIN}/v3`);
  });

  it('lets baseUrl replace the whole base (trailing slash tolerated)', async () => {
    const client = local({ baseUrl: `${platform.url}/v3/` });
    expect(client.baseUrl).toBe(`${platform.url}/v3`);
    await client.users.list();
    expect(lastRequest().path).toBe('/v3/users');
  });

  it.each([
    [{ appId, region: 'eu', apiKey: '' }, /apiKey is required/],
    [{ appId, region: 'eu', apiKey: '   ' }, /apiKey is required/],
    [{ appId, region: 'eu' }, /apiKey is required.*environment variable/],
    [{ appId, region: 'ap', apiKey }, /region must be one of us, eu, in.*"ap"/],
    [{ appId, apiKey }, /region must be one of/],
    [{ appId: 'my app', region: 'us', apiKey }, /appId .*host name label.*"my app"/],
    [{ appId: 'a.b', region: 'us', apiKey }, /appId/],
    [{ appId: '-ab', region: 'us', apiKey }, /appId/],
    [{ appId: '', region: 'us', apiKey }, /appId/],
    [{ appId, region: 'us', apiKey, domain: 'https://x.io' }, /domain must be a host name/],
    [{ apiKey, baseUrl: 'ftp://files.example' }, /baseUrl must be an absolute http\(s\) URL/],
    [{ apiKey, baseUrl: 'https://user:pw@proxy.example/v3' }, /baseUrl must not carry credentials/],
    [{ appId, region: 'us', apiKey, timeoutMs: 0 }, /timeoutMs/],
    [{ appId, region: 'us', apiKey, retry: -1 }, /retry\.retries/],
    [{ appId, region: 'us', apiKey, retry: { limit: 3 } }, /unknown retry option limit/],
    [{ apiKey, baseUrl: 'http://localhost/v3', region: 'mars' }, /region must be one of/],
    [{ apiKey, baseUrl: 'http://localhost/v3', appId: 'a b' }, /appId/],
  ])('refuses bad options at creation: %j', (options, message) => {
    expect(() => createChatClient(options as never)).toThrow(message);
  });

  it.each([null, undefined, 'sk-chat'])('refuses %j for options, naming what it needs', (options) => {
    expect(() => createChatClient(options as never)).toThrow(
      new ValidationError('createChatClient needs { appId, region, apiKey } (or { baseUrl, apiKey }).'),
    );
  });

  it('takes a right appId and region given alongside a baseUrl, and the baseUrl wins', () => {
    const client = createChatClient({ apiKey, baseUrl: 'https://proxy.example/v3', appId, region: 'EU' });
    expect(client.baseUrl).toBe('https://proxy.example/v3');
  });

  it('reports bad options as a ValidationError without echoing the key', () => {
    try {
      createChatClient({ appId: 'bad id', region: 'us', apiKey });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect(String(error)).not.toContain(apiKey);
    }
  });
});

describe('headers', () => {
  it('sends apiKey, Content-Type and Accept exactly as the spec shows, and no body on GET', async () => {
    await local().users.list();
    const { headers, body, method } = lastRequest();
    expect(method).toBe('GET');
    expect(headers.apikey).toBe(apiKey);
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('application/json');
    expect(body).toBe('');
  });

  it('keeps its own headers when the caller passes the same names in another case', async () => {
    await local().request('GET', '/users', { headers: { APIKEY: 'other', 'content-type': 'text/plain', 'X-Trace': 't1' } });
    const { headers } = lastRequest();
    expect(headers.apikey).toBe(apiKey);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-trace']).toBe('t1');
  });

  it('hands an injected fetch a plain header object spelled as in the spec', async () => {
    let seen: RequestInit | undefined;
    const client = createChatClient({
      appId, region: 'us', apiKey,
      fetch: async (_url, init) => {
        seen = init;
        return new Response('{"data":[]}', { headers: { 'content-type': 'application/json' } });
      },
    });
    await client.users.list();
    expect(seen?.headers).toEqual({ apiKey, 'Content-Type': 'application/json', Accept: 'application/json' });
  });
});

describe('users', () => {
  it('lists one page, passing perPage, page and other query fields, and keeps unknown fields', async () => {
    const page = await local().users.list({ perPage: 2, page: 2, searchKey: 'User', withTags: true, tags: ['a', 'b'] });
    const { query } = lastRequest();
    expect(query.get('perPage')).toBe('2');
    expect(query.get('page')).toBe('2');
    expect(query.get('searchKey')).toBe('User');
    expect(query.get('withTags')).toBe('true');
    expect(query.getAll('tags')).toEqual(['a', 'b']);
    expect(page.data.map((user) => user.uid)).toEqual(['us-3', 'us-4']);
    expect(page.data[0]).toMatchObject({ metadata: { team: 1 } }); // not in the user record schema, kept
    expect(page.meta?.pagination).toMatchObject({ current_page: 2, total_pages: 3 });
    expect(page.meta).toMatchObject({ region: 'us', cursor: { affix: 'append' } });
  });

  it('iterates over every page and stops at the last one', async () => {
    const before = platform.requests.length;
    const sizes: number[] = [];
    for await (const page of local().users.iterate({ perPage: 2 })) sizes.push(page.data.length);
    expect(sizes).toEqual([2, 2, 1]);
    expect(platform.requests.slice(before).map((request) => request.query.get('page'))).toEqual(['1', '2', '3']);
  });

  it('gives every user across the pages through each()', async () => {
    const before = platform.requests.length;
    const seen: string[] = [];
    for await (const user of local().users.each({ perPage: 2 })) seen.push(user.uid);
    expect(seen).toEqual(users.us.map((user) => user.uid));
    expect(platform.requests.slice(before).map((request) => request.query.get('page'))).toEqual(['1', '2', '3']);
  });

  it('starts at the page asked for', async () => {
    const pages: unknown[] = [];
    for await (const page of local().users.iterate({ perPage: 2, page: 2 })) pages.push(page.meta?.pagination?.current_page);
    expect(pages).toEqual([2, 3]);
  });

  it('stops at an empty page when the service gives no pagination', async () => {
    const bare = await startPlatform({ appId, apiKey, key: 'k', secret: 's', users, withoutPagination: true });
    try {
      const client = createChatClient({ apiKey, baseUrl: `${bare.url}/v3`, retry: 0 });
      const seen: string[] = [];
      for await (const user of client.users.each({ perPage: 2 })) seen.push(user.uid);
      expect(seen).toHaveLength(5);
      expect(bare.requests.map((request) => request.query.get('page'))).toEqual(['1', '2', '3', '4']);
    } finally {
      await bare.close();
    }
  });

  it('stops with pagination_loop when the service ignores page and answers the same page again', async () => {
    let calls = 0;
    const sameEveryTime: typeof fetch = async () => {
      calls++;
      return Response.json({ data: [{ uid: 'a' }, { uid: 'b' }] });
    };
    const client = createChatClient({ appId, region: 'us', apiKey, fetch: sameEveryTime });
    const seen: string[] = [];
    const walk = async () => {
      for await (const user of client.users.each()) seen.push(user.uid);
    };
    await expect(walk()).rejects.toMatchObject({ code: 'pagination_loop' });
    expect(seen).toEqual(['a', 'b']);
    expect(calls).toBe(2);
  });

  it('reads pagination written as strings, and takes a null meta as no pagination', async () => {
    const requested: string[] = [];
    const paged: typeof fetch = async (input) => {
      const page = new URL(String(input)).searchParams.get('page')!;
      requested.push(page);
      return Response.json(
        page === '3' ? { data: [], meta: null } : { data: [{ uid: `u${page}` }], meta: { pagination: { current_page: page, total_pages: '2' } } },
      );
    };
    const client = createChatClient({ appId, region: 'us', apiKey, fetch: paged });
    const seen: string[] = [];
    for await (const page of client.users.iterate()) seen.push(...page.data.map((user) => user.uid));
    expect(seen).toEqual(['u1', 'u2']);
    expect(requested).toEqual(['1', '2']);
    await expect(client.users.list({ page: 3 })).resolves.toEqual({ data: [], meta: null });
  });

  it('trusts the page number the service reports to find the last page', async () => {
    const requested: string[] = [];
    const ahead: typeof fetch = async (input) => {
      const page = new URL(String(input)).searchParams.get('page')!;
      requested.push(page);
      // The service answers page 1 as its page 2 of 2: nothing is left to read.
      return Response.json({ data: [{ uid: `u${page}` }], meta: { pagination: { current_page: Number(page) + 1, total_pages: 2 } } });
    };
    const client = createChatClient({ appId, region: 'us', apiKey, fetch: ahead });
    const seen: string[] = [];
    for await (const user of client.users.each()) seen.push(user.uid);
    expect(seen).toEqual(['u1']);
    expect(requested).toEqual(['1']);
  });

  it('refuses pagination details of the wrong type as invalid_response', async () => {
    for (const [meta, path] of [
      [{ pagination: { total_pages: true } }, ['meta', 'pagination', 'total_pages']],
      [{ pagination: 'all' }, ['meta', 'pagination']],
    ] as const) {
      const client = createChatClient({ appId, region: 'us', apiKey, fetch: async () => Response.json({ data: [], meta }) });
      const error = await rejection(client.users.list());
      expect(error.code).toBe('invalid_response');
      expect(error.issues?.map((issue) => issue.path)).toEqual([path]);
    }
  });

  it('keeps the key out of a pagination_loop error when the base URL holds it', async () => {
    const client = createChatClient({ apiKey, baseUrl: `https://proxy.example/${apiKey}/v3`, fetch: async () => Response.json({ data: [{ uid: 'a' }] }) });
    const walk = async () => {
      for await (const _ of client.users.iterate());
    };
    const error = await walk().then(() => undefined, (reason: unknown) => reason as ApiError);
    expect(error).toMatchObject({ code: 'pagination_loop', url: 'https://proxy.example/[redacted]/v3/users?page=2' });
    expect(error!.message).toContain('GET https://proxy.example/[redacted]/v3/users pagination does not end');
    expect(error!.message).not.toContain(apiKey);
  });

  it('yields nothing for a region without users', async () => {
    const { fetch } = forwardingFetch(platform);
    const client = createChatClient({ appId, region: 'in', apiKey, domain: 'example.test', fetch });
    const pages = [];
    for await (const page of client.users.iterate()) pages.push(page);
    expect(pages).toEqual([]); // the empty first page is not yielded
  });

  it('returns a realistic answer (fixtures/api/users.json) with every field kept', async () => {
    const recorded = JSON.parse(readFileSync(new URL('../../fixtures/api/users.json', import.meta.url), 'utf8'));
    const client = createChatClient({ appId, region: 'eu', apiKey, fetch: async () => Response.json(recorded) });
    expect(await client.users.list()).toEqual(recorded);
  });

  it('refuses a 2xx body without the data list as invalid_response', async () => {
    platform.plan({ status: 200, body: { users: [] } });
    const error = await rejection(local().users.list());
    expect(error.code).toBe('invalid_response');
    expect(error.issues?.[0]?.path).toEqual(['data']);
  });
});

describe('errors', () => {
  it('turns a 401 into an ApiError with status, parsed body, method, url and request id', async () => {
    const error = await rejection(local({ apiKey: 'wrong-key-000' }).users.list({ perPage: 1 }));
    expect(error).toMatchObject({ code: 'http', status: 401, method: 'GET', url: `${platform.url}/v3/users?perPage=1` });
    expect(error.body).toMatchObject({ error: { code: 'AUTH_ERR_APIKEY_NOT_FOUND' } });
    expect(error.requestId).toMatch(/^req-401-/);
    expect(error.message).toContain('401');
  });

  it('keeps a body that is not JSON as text', async () => {
    platform.plan({ status: 500, body: '<html><body>Internal error</body></html>' });
    const error = await rejection(local().users.list());
    expect(error.status).toBe(500);
    expect(error.body).toBe('<html><body>Internal error</body></html>');
  });

  it('refuses a 2xx body that is not JSON', async () => {
    platform.plan({ status: 200, body: 'maintenance page' });
    const error = await rejection(local().users.list());
    expect(error.code).toBe('invalid_response');
    expect(error.body).toBe('maintenance page');
  });

  it('reports a dropped connection as code network', async () => {
    platform.plan({ destroy: true });
    const error = await rejection(local().users.list());
    expect(error.code).toBe('network');
    expect(error.status).toBe(0);
  });

  it('reports a refused connection as code network', async () => {
    const error = await rejection(local({ baseUrl: CLOSED_PORT }).users.list());
    expect(error.code).toBe('network');
  });

  it('times out a slow answer after timeoutMs', async () => {
    platform.plan({ delayMs: 1_000, body: { data: [] } });
    const started = Date.now();
    const error = await rejection(local({ timeoutMs: 150 }).users.list());
    expect(error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('times out a body that trickles in after the headers', async () => {
    platform.plan({ bodyDelayMs: 1_000, body: { data: [] } });
    const error = await rejection(local({ timeoutMs: 150 }).users.list());
    expect(error.code).toBe('timeout');
  });

  it('stops at the caller’s AbortSignal with code aborted', async () => {
    platform.plan({ delayMs: 1_000, body: { data: [] } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(local().users.list({}, { signal: controller.signal }));
    expect(error.code).toBe('aborted');
  });

  it('refuses a path that would leave the base URL (the key must not travel elsewhere)', async () => {
    await expect(local().request('GET', 'https://elsewhere.example/users')).rejects.toThrow(/relative to the base URL/);
    await expect(local().request('GET', '//elsewhere.example/users')).rejects.toThrow(/relative to the base URL/);
  });
});

describe('retries', () => {
  const retrying = (options: Partial<Parameters<typeof createChatClient>[0]> = {}) =>
    local({ retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20 }, ...options });

  it('repeats a GET after 500, 502 and a dropped connection, then succeeds', async () => {
    const before = platform.requests.length;
    platform.plan({ status: 500, body: { error: 'x' } }, { destroy: true });
    const page = await retrying().users.list();
    expect(page.data.length).toBe(5);
    expect(platform.requests.length - before).toBe(3);
  });

  it('gives up after the configured number of retries, saying how many attempts were made', async () => {
    const before = platform.requests.length;
    platform.plan({ status: 503 }, { status: 503 }, { status: 503 });
    const error = await rejection(retrying().users.list());
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expect(platform.requests.length - before).toBe(3);
  });

  it('honours Retry-After in seconds on a 429', async () => {
    platform.plan({ status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } });
    const started = Date.now();
    await retrying().users.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('honours Retry-After as an HTTP date', async () => {
    platform.plan({ status: 503, headers: { 'retry-after': new Date(Date.now() + 1_500).toUTCString() } });
    const started = Date.now();
    await retrying().users.list();
    // HTTP dates have whole seconds: the wait is between 0.5 and 1.5 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs', async () => {
    platform.plan({ status: 429, headers: { 'retry-after': '120' } });
    const started = Date.now();
    const error = await rejection(retrying().users.list());
    expect(error).toMatchObject({ status: 429, retryAfterMs: 120_000, attempts: 1 });
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('retries a timed-out GET', async () => {
    const before = platform.requests.length;
    platform.plan({ delayMs: 500, body: { data: [] } });
    const page = await retrying({ timeoutMs: 200 }).request<{ data: unknown[] }>('GET', '/users');
    expect(page.data.length).toBe(5);
    expect(platform.requests.length - before).toBe(2);
  }, 10_000);

  it('does not repeat a POST that failed after it was sent (500, dropped connection)', async () => {
    for (const answer of [{ status: 500 }, { destroy: true }]) {
      const before = platform.requests.length;
      platform.plan(answer);
      await rejection(retrying().request('POST', '/messages', { body: { text: 'hi' } }));
      expect(platform.requests.length - before).toBe(1);
    }
  });

  it('repeats a POST refused with 429 or 503', async () => {
    const before = platform.requests.length;
    platform.plan({ status: 429, headers: { 'retry-after': '0' } }, { status: 503 }, { status: 201, body: { data: { id: 'm1' } } });
    const answer = await retrying().request('POST', '/messages', { body: { text: 'hi' } });
    expect(answer).toEqual({ data: { id: 'm1' } });
    expect(platform.requests.slice(before).map((request) => request.body)).toEqual(Array(3).fill('{"text":"hi"}'));
  });

  it('repeats a POST whose connection was refused (nothing was sent)', async () => {
    // Port 2 is closed on any test machine (fetch refuses port 1 itself): the connection is refused before a byte is sent.
    const error = await rejection(retrying({ baseUrl: CLOSED_PORT }).request('POST', '/messages', { body: {} }));
    expect(error).toMatchObject({ code: 'network', attempts: 3 });
  });

  it('does not retry a 4xx other than 408/425/429', async () => {
    const before = platform.requests.length;
    await rejection(retrying().request('GET', '/nowhere'));
    expect(platform.requests.length - before).toBe(1);
  });

  it('stops waiting between retries when the caller aborts', async () => {
    platform.plan({ status: 429, headers: { 'retry-after': '5' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await rejection(retrying().users.list({}, { signal: controller.signal }));
    expect(error.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('retries twice by default', async () => {
    const before = platform.requests.length;
    platform.plan({ status: 500 }, { status: 500 }, { status: 500 });
    const client = createChatClient({ apiKey, baseUrl: `${platform.url}/v3` });
    await rejection(client.users.list());
    expect(platform.requests.length - before).toBe(3);
  }, 15_000);
});
