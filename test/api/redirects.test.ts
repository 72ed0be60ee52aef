/**
 * Credentials go only to the origin a client was made for. Two real local servers on different ports (so
 * different origins): the platform answers with redirects, the other one records whatever reaches it and
 * must never see a credential header or a request body. Same-origin redirects are still followed, with the
 * method and body rewritten as fetch would.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createChatClient, createManagementClient } from '../../src/api/index.js';
import { type Platform, startPlatform } from './platform-server.js';

const apiKey = 'sk-redirect-3c1b9e77d2a04f5e';
const key = 'mk-redirect-a8f0e3';
const secret = 'ms-redirect-7d6c5b4a3921';

let platform: Platform;
let elsewhere: Platform;
beforeAll(async () => {
  platform = await startPlatform({ appId: 'app', apiKey, key, secret, users: { us: [{ uid: 'u1' }, { uid: 'u2' }] } });
  elsewhere = await startPlatform({ appId: 'app', apiKey: 'x', key: 'x', secret: 'x', users: {} });
});
afterAll(() => Promise.all([platform.close(), elsewhere.close()]));
beforeEach(() => {
  platform.requests.length = 0;
  elsewhere.requests.length = 0;
});

const chat = (options: Partial<Parameters<typeof createChatClient>[0]> = {}) =>
  createChatClient({ apiKey, baseUrl: `${platform.url}/v3`, retry: { retries: 2, minDelayMs: 1 }, ...options } as Parameters<typeof createChatClient>[0]);
const management = () => createManagementClient({ key, secret, baseUrl: platform.url, retry: { retries: 2, minDelayMs: 1 } });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(() => expect.unreachable('should have been refused'), (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** Every text form of an error: none may carry a credential. */
function expectNoCredential(error: ApiError): void {
  const forms = [error.message, String(error), JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), error.stack ?? ''];
  for (const form of forms) for (const credential of [apiKey, key, secret]) expect(form).not.toContain(credential);
}

const elsewhereHost = () => new URL(elsewhere.url).host;
const REDIRECTS = [301, 302, 303, 307, 308];

describe('redirects to another origin are refused', () => {
  it.each(REDIRECTS)('a GET answered %i towards another port: refused, naming the host, nothing sent there', async (status) => {
    platform.plan({ status, headers: { location: `${elsewhere.url}/v3/users?stolen=1` } });
    const error = await rejection(chat().users.list());
    expect(error).toMatchObject({ code: 'redirect', status, method: 'GET', attempts: 1 });
    expect(error.message).toContain(`host ${elsewhereHost()}`);
    expect(platform.requests).toHaveLength(1); // not retried
    expect(elsewhere.requests).toEqual([]);
    expectNoCredential(error);
  });

  it.each(REDIRECTS)('a POST with key, secret and body answered %i: the other origin sees nothing', async (status) => {
    platform.plan({ status, headers: { location: `${elsewhere.url}/apps` } });
    const error = await rejection(management().apps.create({ name: 'Desk', region: 'eu' }));
    expect(error).toMatchObject({ code: 'redirect', status, method: 'POST' });
    expect(platform.requests).toHaveLength(1);
    expect(platform.requests[0]!.body).toContain('Desk'); // the body went only to the platform
    expect(elsewhere.requests).toEqual([]);
    expectNoCredential(error);
  });

  it('refuses the same port under another host name (localhost is not 127.0.0.1), and a scheme-relative location', async () => {
    const port = new URL(platform.url).port;
    platform.plan({ status: 307, headers: { location: `http://localhost:${port}/v3/users` } });
    expect(await rejection(chat().users.list())).toMatchObject({ code: 'redirect', message: expect.stringContaining(`host localhost:${port}`) });
    platform.plan({ status: 302, headers: { location: `//${elsewhereHost()}/v3/users` } });
    expect((await rejection(chat().users.list())).code).toBe('redirect');
    expect(platform.requests).toHaveLength(2);
    expect(elsewhere.requests).toEqual([]);
  });

  it('refuses a hop to another origin after same-origin hops', async () => {
    platform.plan(
      { status: 302, headers: { location: '/v3/first' } },
      { status: 307, headers: { location: `${platform.url}/v3/second` } },
      { status: 308, headers: { location: `${elsewhere.url}/v3/third` } },
    );
    const error = await rejection(chat().request('POST', '/messages', { body: { text: 'private' } }));
    expect(error).toMatchObject({ code: 'redirect', status: 308 });
    expect(platform.requests.map((request) => request.path)).toEqual(['/v3/messages', '/v3/first', '/v3/second']);
    expect(elsewhere.requests).toEqual([]);
  });

  it('redacts a location that carries the key and still names its host', async () => {
    platform.plan({ status: 302, headers: { location: `${elsewhere.url}/collect?k=${apiKey}&again=${encodeURIComponent(apiKey)}` } });
    const error = await rejection(chat().users.list());
    expect(error.message).toContain(`host ${elsewhereHost()}`);
    expectNoCredential(error);
  });

  it('never names a host made of the key', async () => {
    const double: typeof fetch = async () => new Response(null, { status: 307, headers: { location: `https://${apiKey}.attacker.example/x` } });
    const error = await rejection(chat({ fetch: double }).users.list());
    expect(error.code).toBe('redirect');
    expectNoCredential(error);
  });

  it('refuses a location that is not a URL, or not http(s)', async () => {
    platform.plan({ status: 302, headers: { location: 'http://[::1' } }, { status: 302, headers: { location: 'file:///etc/passwd' } });
    const unparsable = await rejection(chat().users.list());
    expect(unparsable.code).toBe('redirect');
    expect(unparsable.message).toContain('to an address that cannot be shown, another origin');
    expect((await rejection(chat().users.list())).code).toBe('redirect');
    expect(elsewhere.requests).toEqual([]);
  });

  it('refuses the answer when an injected fetch follows redirects itself (it ignored redirect: manual)', async () => {
    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'follow' });
    platform.plan({ status: 302, headers: { location: `${elsewhere.url}/v3/users` } });
    const error = await rejection(chat({ fetch: following }).users.list());
    expect(error.code).toBe('redirect');
    expect(error.message).toMatch(/options\.fetch.*redirect: 'manual'/);
    expectNoCredential(error);
  });

  it('refuses an opaque redirect (a browser fetch hides its target) without following it', async () => {
    let calls = 0;
    const opaque: typeof fetch = async () => {
      calls++;
      const response = new Response(null, { status: 200 });
      Object.defineProperty(response, 'type', { value: 'opaqueredirect' });
      return response;
    };
    const error = await rejection(chat({ fetch: opaque }).users.list());
    expect(error).toMatchObject({ code: 'redirect', status: 0 });
    expect(error.message).toContain('a target this runtime does not reveal (an opaque redirect)');
    expect(calls).toBe(1);
  });

  it('hands an injected fetch redirect: manual, and refuses a redirect answered by a test double', async () => {
    const seen: RequestInit[] = [];
    const double: typeof fetch = async (_input, init) => {
      seen.push(init!);
      return new Response(null, { status: 302, headers: { location: 'https://attacker.example/v3/users' } });
    };
    const error = await rejection(chat({ fetch: double }).users.list());
    expect(error.message).toContain('host attacker.example');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.redirect).toBe('manual');
  });
});

describe('redirects within the origin are followed', () => {
  it('a GET moved with 301, 302, 303, 307 and 308 (relative and absolute locations) reaches the users', async () => {
    for (const status of REDIRECTS) {
      platform.requests.length = 0;
      const location = status % 2 ? '/v3/users' : `${platform.url}/v3/users`;
      platform.plan({ status, headers: { location } });
      const page = await chat().users.list({ perPage: 5 });
      expect(page.data.map((user) => user.uid)).toEqual(['u1', 'u2']);
      expect(platform.requests.map((request) => [request.method, request.path, request.headers.apikey])).toEqual([
        ['GET', '/v3/users', apiKey],
        ['GET', '/v3/users', apiKey],
      ]);
    }
  });

  it('turns a POST into a GET without body after 303, as fetch does (and after 301/302)', async () => {
    for (const status of [303, 301, 302]) {
      platform.requests.length = 0;
      platform.plan({ status, headers: { location: '/v3/receipt' } }, { status: 200, body: { data: { ok: true } } });
      await expect(chat().request('POST', '/messages', { body: { text: 'hi' } })).resolves.toEqual({ data: { ok: true } });
      expect(platform.requests.map((request) => [request.method, request.path, request.body])).toEqual([
        ['POST', '/v3/messages', '{"text":"hi"}'],
        ['GET', '/v3/receipt', ''],
      ]);
    }
  });

  it('closes the body of a redirect it follows', async () => {
    let cancelled = false;
    const answers = [
      () =>
        new Response(new ReadableStream({ pull: (controller) => controller.enqueue(new Uint8Array(1024)), cancel: () => void (cancelled = true) }), {
          status: 302,
          headers: { location: '/v3/users' },
        }),
      () => Response.json({ data: [] }),
    ];
    const double: typeof fetch = async () => answers.shift()!();
    await expect(chat({ fetch: double }).users.list()).resolves.toMatchObject({ data: [] });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cancelled).toBe(true);
  });

  it('keeps a HEAD a HEAD after 303, and a PUT a PUT with its body after 301/302 (only a POST becomes a GET)', async () => {
    platform.plan({ status: 303, headers: { location: '/v3/other' } }, { status: 200, body: '' });
    await chat().request('HEAD', '/users').catch(() => undefined);
    for (const status of [301, 302]) {
      platform.plan({ status, headers: { location: '/v3/moved' } }, { status: 200, body: { data: { ok: true } } });
      await expect(chat().request('PUT', '/messages/1', { body: { text: 'edit' } })).resolves.toEqual({ data: { ok: true } });
    }
    expect(platform.requests.map((request) => [request.method, request.path, request.body])).toEqual([
      ['HEAD', '/v3/users', ''],
      ['HEAD', '/v3/other', ''],
      ['PUT', '/v3/messages/1', '{"text":"edit"}'],
      ['PUT', '/v3/moved', '{"text":"edit"}'],
      ['PUT', '/v3/messages/1', '{"text":"edit"}'],
      ['PUT', '/v3/moved', '{"text":"edit"}'],
    ]);
  });

  it('takes a Location on an answer that is not a redirect (201, 300, 304) as no redirect', async () => {
    for (const status of [201, 300, 304]) {
      platform.requests.length = 0;
      platform.plan({ status, headers: { location: `${elsewhere.url}/apps/1` }, body: status === 304 ? '' : { data: { created: true } } });
      const outcome = await management()
        .apps.create({ name: 'Desk', region: 'eu' })
        .then(
          () => 'resolved',
          (error: ApiError) => error.code,
        );
      expect(outcome).toBe(status === 201 ? 'resolved' : 'http');
      expect(platform.requests).toHaveLength(1);
    }
    expect(elsewhere.requests).toEqual([]);
  });

  it('keeps the method, body and credentials after 307 and 308', async () => {
    for (const status of [307, 308]) {
      platform.requests.length = 0;
      platform.plan({ status, headers: { location: '/apps' } });
      await expect(management().apps.create({ name: 'Desk', region: 'eu' })).resolves.toMatchObject({ data: { name: 'Desk' } });
      expect(platform.requests).toHaveLength(2);
      const [first, second] = platform.requests;
      expect([second!.method, second!.path, second!.body]).toEqual(['POST', '/apps', first!.body]);
      expect([second!.headers.key, second!.headers.secret]).toEqual([key, secret]);
    }
  });

  it('follows at most 5 redirects', async () => {
    const hop = (n: number) => ({ status: 302, headers: { location: `/v3/hop${n}` } });
    platform.plan(hop(1), hop(2), hop(3), hop(4), { status: 302, headers: { location: '/v3/users' } });
    await expect(chat().users.list()).resolves.toMatchObject({ data: [{ uid: 'u1' }, { uid: 'u2' }] });
    expect(platform.requests).toHaveLength(6);

    platform.requests.length = 0;
    platform.plan(hop(1), hop(2), hop(3), hop(4), hop(5), hop(6));
    const error = await rejection(chat().users.list());
    expect(error).toMatchObject({ code: 'redirect', status: 302, message: expect.stringContaining('more than 5 times') });
    expect(platform.requests).toHaveLength(6);
  });
});
