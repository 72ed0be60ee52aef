/**
 * `users.iterate`/`each` always end: against a real local server that cycles through pages (two alternating,
 * three in a ring, the same one, a page number reported twice) the walk stops at the first page seen before
 * with an `ApiError` of code `pagination_loop`; a service that never runs out of fresh pages is stopped by
 * `maxPages` (default 10 000).
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, ValidationError, createChatClient } from '../../src/api/index.js';

const apiKey = 'sk-pages-51f0a9c3d7e2';
/** What the server answers for each requested page number. */
let pageBody: (page: number) => unknown;
let requested: number[] = [];
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
    requested.push(page);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(pageBody(page)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requested = [];
});

const client = () => createChatClient({ apiKey, baseUrl, retry: 0 });
const users = (...uids: string[]) => ({ data: uids.map((uid) => ({ uid, name: uid })) });

/** Far more pages than any test serves: a walk past it would have gone on forever. */
const RUNAWAY = 1_000;

/** Walks `iterate` and returns the uids yielded and the error it ended with (a runaway walk is cut, and fails). */
async function walk(options: { maxPages?: number } = {}, query = {}): Promise<{ uids: string[]; error: unknown; ms: number }> {
  const uids: string[] = [];
  const started = performance.now();
  try {
    for await (const page of client().users.iterate(query, { ...options, signal: AbortSignal.timeout(10_000) })) {
      uids.push(...page.data.map((user) => user.uid));
      if (requested.length > RUNAWAY) throw new Error(`walked ${requested.length} pages: the walk does not end`);
    }
    return { uids, error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { uids, error, ms: performance.now() - started };
  }
}

describe('pagination ends', () => {
  it('two pages alternating (A, B, A, B, …): stops when A comes back, after 3 requests', async () => {
    pageBody = (page) => (page % 2 ? users('a1', 'a2') : users('b1', 'b2'));
    const { uids, error, ms } = await walk();
    expect(uids).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'pagination_loop', method: 'GET', status: 200, url: `${baseUrl}/users?page=3`, message: expect.stringContaining('page 3 has the same users as page 1') });
    expect(String(error)).not.toContain(apiKey);
    expect(requested).toEqual([1, 2, 3]);
    expect(ms).toBeLessThan(5_000);
    console.log(`two alternating pages: stopped after ${requested.length} requests, ${ms.toFixed(1)} ms`);
  });

  it('alternating pages that each announce one more page are not walked again either', async () => {
    pageBody = (page) => ({ ...(page % 2 ? users('a') : users('b')), meta: { pagination: { current_page: page, total_pages: page + 1 } } });
    const { error } = await walk();
    expect(error).toMatchObject({ code: 'pagination_loop' });
    expect(requested).toEqual([1, 2, 3]);
  });

  it('a ring of three pages, started on page 2', async () => {
    pageBody = (page) => [users('c'), users('a'), users('b')][page % 3];
    const { uids, error } = await walk({}, { page: 2 });
    expect(uids).toEqual(['b', 'c', 'a']);
    expect(error).toMatchObject({ code: 'pagination_loop', message: expect.stringContaining('page 5 has the same users as page 2') });
    expect(requested).toEqual([2, 3, 4, 5]);
  });

  it('a service that ignores page (the same answer every time): stops at the second request, through each() too', async () => {
    pageBody = () => users('only');
    const seen: string[] = [];
    const error = await (async () => {
      for await (const user of client().users.each()) {
        seen.push(user.uid);
        if (seen.length > RUNAWAY) throw new Error('the walk does not end');
      }
    })().catch((reason: unknown) => reason);
    expect(seen).toEqual(['only']);
    expect(error).toMatchObject({ code: 'pagination_loop' });
    expect(requested).toEqual([1, 2]);
  });

  it('fresh users every time but the same reported page number: stops at the repeat', async () => {
    pageBody = (page) => ({ ...users(`u${page}`), meta: { pagination: { current_page: '1', total_pages: 9 } } });
    const { uids, error } = await walk();
    expect(uids).toEqual(['u1']);
    expect(error).toMatchObject({ code: 'pagination_loop', message: expect.stringContaining('says it is page 1') });
    expect(requested).toEqual([1, 2]);
  });

  it('endless fresh pages: stopped by maxPages, after exactly that many requests', async () => {
    pageBody = (page) => users(`u${page}`);
    const { uids, error } = await walk({ maxPages: 25 });
    expect(uids).toHaveLength(25);
    expect(error).toMatchObject({ code: 'pagination_loop', message: expect.stringContaining('maxPages is 25') });
    expect(requested).toHaveLength(25);
  });

  it('a walk exactly maxPages long ends normally', async () => {
    pageBody = (page) => ({ ...users(`u${page}`), meta: { pagination: { current_page: page, total_pages: 3 } } });
    const { uids, error } = await walk({ maxPages: 3 });
    expect(error).toBeUndefined();
    expect(uids).toEqual(['u1', 'u2', 'u3']);
  });

  it('maxPages: 1 reads one page', async () => {
    pageBody = (page) => users(`u${page}`);
    const { uids, error } = await walk({ maxPages: 1 });
    expect(uids).toEqual(['u1']);
    expect(error).toMatchObject({ code: 'pagination_loop', message: expect.stringContaining('maxPages is 1') });
    expect(requested).toEqual([1]);
  });

  it('tells pages apart whose ids only differ in where one ends (ab, c versus a, bc)', async () => {
    pageBody = (page) => [users('ab', 'c'), users('a', 'bc'), users()][page - 1];
    const { uids, error } = await walk();
    expect(error).toBeUndefined();
    expect(uids).toEqual(['ab', 'c', 'a', 'bc']);
  });

  it('tells apart pages whose fingerprints share their high 21 bits (u320 and u1691)', async () => {
    // Found by brute force against the page fingerprint: a fingerprint that kept only its high word would take them for one page.
    pageBody = (page) => [users('u320'), users('u1691'), users()][page - 1];
    const { uids, error } = await walk();
    expect(error).toBeUndefined();
    expect(uids).toEqual(['u320', 'u1691']);
  });

  it('refuses a maxPages that is not a whole number of at least 1, before any request', async () => {
    for (const maxPages of [0, -1, 1.5, Number.NaN, '5']) {
      const { error } = await walk({ maxPages: maxPages as number });
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(/maxPages/);
    }
    expect(requested).toEqual([]);
  });

  it('stops endless fresh pages at 10 000 by default', async () => {
    let calls = 0;
    const endless: typeof fetch = async () => Response.json(users(`u${++calls}`));
    const chat = createChatClient({ apiKey, appId: 'app', region: 'us', fetch: endless });
    let pages = 0;
    const error = await (async () => {
      for await (const _page of chat.users.iterate()) if (++pages > 10_001) throw new Error('the walk does not end');
    })().catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: 'pagination_loop', message: expect.stringContaining('maxPages is 10000') });
    expect([pages, calls]).toEqual([10_000, 10_000]);
  }, 60_000);
});
