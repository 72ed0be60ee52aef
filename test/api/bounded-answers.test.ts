/**
 * Answers are read with a cap (`maxResponseBytes`, default 10 MiB): past it the call rejects with code
 * `response_too_large` and the connection is closed, so the server stops sending.
 *
 * The memory figure is measured honestly: the client runs alone in a child process (the API bundled by
 * esbuild from the sources, node --expose-gc) while this process serves a 400 MB answer; the child samples
 * `process.memoryUsage()` every 2 ms during the call and reports its peak growth over a collected baseline.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ValidationError, createChatClient, createManagementClient } from '../../src/api/index.js';

const MB = 1024 * 1024;
const apiKey = 'sk-bounded-77e0c1a9';

interface Served {
  /** Bytes handed to the socket before it closed. */
  written: number;
  /** When the server saw the connection closed (ms since the request arrived), if it did. */
  closedAfterMs?: number;
  ended: boolean;
}

type Plan = { total: number; status?: number; declare?: boolean; contentType?: string } | { body: string; status?: number };
let plan: Plan;
let served: Served[] = [];
let server: Server;
let baseUrl: string;

/** Streams `total` bytes in 64 KiB chunks, waiting for the socket to drain, until done or closed. */
function stream(res: ServerResponse, record: Served, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x'.charCodeAt(0));
  const pump = () => {
    while (!res.destroyed && record.written < total) {
      const size = Math.min(chunk.length, total - record.written);
      record.written += size;
      if (!res.write(size === chunk.length ? chunk : chunk.subarray(0, size))) return void res.once('drain', pump);
    }
    if (!res.destroyed) {
      record.ended = true;
      res.end();
    }
  };
  pump();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const record: Served = { written: 0, ended: false };
    if (req.url === '/v3/warm') return void res.end('{}');
    served.push(record);
    const started = performance.now();
    res.on('close', () => (record.closedAfterMs = performance.now() - started));
    if ('body' in plan) {
      res.writeHead(plan.status ?? 200, { 'content-type': 'application/json' });
      return void res.end(plan.body);
    }
    const headers: Record<string, string | number> = { 'content-type': plan.contentType ?? 'application/json' };
    if (plan.declare) headers['content-length'] = plan.total;
    res.writeHead(plan.status ?? 200, headers);
    stream(res, record, plan.total);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }),
);

const chat = (options: { maxResponseBytes?: number; fetch?: typeof fetch } = {}) => createChatClient({ apiKey, baseUrl: `${baseUrl}/v3`, retry: 0, ...options });
const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('should have failed'), (error: unknown) => error as ApiError);
const waitFor = async (check: () => boolean, ms = 5_000) => {
  for (const until = Date.now() + ms; !check() && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('bounded answers', () => {
  it('a 400 MB answer: refused past 10 MiB, quickly, the connection closed, the client holding less than 20 MB', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bounded-answer-'));
    try {
      await build({ entryPoints: [new URL('../../src/api/index.ts', import.meta.url).pathname], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'api.mjs'), logLevel: 'error' });
      writeFileSync(join(dir, 'client.mjs'), CHILD);
      const run = async (live: boolean) => {
        plan = { total: 400 * MB };
        served = [];
        const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', join(dir, 'client.mjs'), `${baseUrl}/v3`, apiKey], {
          timeout: 60_000,
          env: { ...process.env, LIVE: live ? '1' : '0' },
        });
        const result = JSON.parse(stdout) as { code: string; message: string; ms: number; peakHeapAndBuffersMB: number; peakRssMB: number };
        await waitFor(() => served[0]?.closedAfterMs !== undefined);
        console.log(`400 MB answer (${live ? 'live, GC at each sample' : 'garbage included'}): ${JSON.stringify(result)}; the server wrote ${(served[0]!.written / MB).toFixed(1)} MiB`);
        expect(result.code).toBe('response_too_large');
        expect(result.message).toContain('10485760 bytes');
        expect(result.message).not.toContain(apiKey);
        expect(result.ms).toBeLessThan(10_000);
        expect(served[0]!.closedAfterMs).toBeDefined(); // the server saw the connection closed
        expect(served[0]!.ended).toBe(false); // before it could send the rest
        expect(served[0]!.written).toBeLessThan(64 * MB); // socket buffers on both sides, far from 400 MB
        return result;
      };
      expect((await run(true)).peakHeapAndBuffersMB).toBeLessThan(20);
      // Garbage included (no forced GC), still a small fraction of the 400 MB read whole before.
      expect((await run(false)).peakHeapAndBuffersMB).toBeLessThan(64);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a Content-Length over the cap is refused before the body is read', async () => {
    plan = { total: 400 * MB, declare: true };
    served = [];
    const error = await failure(chat().users.list());
    expect(error).toMatchObject({ code: 'response_too_large', status: 200, attempts: 1, message: expect.stringContaining(`it declared ${400 * MB}`) });
    await waitFor(() => served[0]?.closedAfterMs !== undefined);
    expect(served[0]!.ended).toBe(false);
  });

  it('an error answer is capped too, and not retried', async () => {
    plan = { total: 64 * 1024, status: 503, contentType: 'text/html' };
    served = [];
    const error = await failure(createChatClient({ apiKey, baseUrl, retry: { retries: 2, minDelayMs: 1 }, maxResponseBytes: 1_000 }).users.list());
    expect(error).toMatchObject({ code: 'response_too_large', status: 503, attempts: 1 });
    expect(error.body).toBeUndefined();
    expect(served).toHaveLength(1);
  });

  it('reads an answer of exactly maxResponseBytes, refuses one byte more (management client too)', async () => {
    const body = JSON.stringify({ data: [{ uid: 'u'.repeat(100) }] });
    plan = { body };
    await expect(chat({ maxResponseBytes: body.length }).users.list()).resolves.toMatchObject({ data: [{ uid: 'u'.repeat(100) }] });
    await expect(failure(chat({ maxResponseBytes: body.length - 1 }).users.list())).resolves.toMatchObject({ code: 'response_too_large' });
    const management = createManagementClient({ key: 'k', secret: 's', baseUrl, retry: 0, maxResponseBytes: body.length - 1 });
    await expect(failure(management.request('GET', '/anything'))).resolves.toMatchObject({ code: 'response_too_large' });
  });

  it('the default cap is 10 MiB: an answer of exactly 10 MiB is read, one declaring a byte more is refused', async () => {
    plan = { total: 10 * MB, declare: true };
    await expect(failure(chat().users.list())).resolves.toMatchObject({ code: 'invalid_response' }); // read whole: 10 MiB of "x" is not JSON
    plan = { total: 10 * MB + 1, declare: true };
    const error = await failure(chat().users.list());
    expect(error).toMatchObject({ code: 'response_too_large', message: expect.stringContaining(`(${10 * MB} bytes) (it declared ${10 * MB + 1})`) });
  });

  it('joins an answer that arrives in many chunks, a character split between two', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ data: [{ uid: 'u1', name: 'Zoë Ørsted 😀' }] }));
    const chunked: typeof fetch = async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            for (let at = 0; at < bytes.length; at += 3) controller.enqueue(bytes.slice(at, at + 3));
            controller.close();
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      );
    await expect(chat({ fetch: chunked, maxResponseBytes: bytes.length }).users.list()).resolves.toMatchObject({ data: [{ uid: 'u1', name: 'Zoë Ørsted 😀' }] });
  });

  it('an answer without a body (204) resolves to undefined', async () => {
    plan = { body: '', status: 204 };
    await expect(chat().request('DELETE', '/messages/1')).resolves.toBeUndefined();
  });

  it('stops an endless stream from an injected fetch and cancels it', async () => {
    let cancelled: unknown;
    let pulled = 0;
    const endless: typeof fetch = async () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            // Endless as far as a 1 MiB cap can tell; closed at 64 MiB so a client without a cap fails instead of hanging.
            if (++pulled > 4_096) return controller.close();
            controller.enqueue(new Uint8Array(16 * 1024));
          },
          cancel(reason) {
            cancelled = reason ?? 'cancelled';
          },
        }),
      );
    const error = await failure(chat({ fetch: endless, maxResponseBytes: MB }).users.list());
    expect(error.code).toBe('response_too_large');
    expect(cancelled).toBeDefined();
    expect(pulled).toBeLessThan(100);
  });

  it('refuses a maxResponseBytes that is not a positive whole number', () => {
    for (const maxResponseBytes of [0, -1, 1.5, Number.POSITIVE_INFINITY, '10' as unknown as number]) {
      expect(() => chat({ maxResponseBytes })).toThrow(ValidationError);
      expect(() => chat({ maxResponseBytes })).toThrow(/maxResponseBytes/);
    }
  });
});

/**
 * The child: one warm-up call (loading fetch's own code is not the answer's cost), then one call with the
 * default cap while memory is sampled every 2 ms. With LIVE=1 each sample first runs a full GC, so the
 * figure is what the client holds; without it, the figure also counts garbage V8 has not collected yet
 * (fetch copies each chunk on its way in, and V8 collects external memory only every few tens of MB).
 */
const CHILD = `
import { createChatClient } from './api.mjs';
const [baseUrl, apiKey] = process.argv.slice(2);
const live = process.env.LIVE === '1';
const client = createChatClient({ apiKey, baseUrl, retry: 0, timeoutMs: 60000 });
await client.request('GET', '/warm');
globalThis.gc(); globalThis.gc();
const base = process.memoryUsage();
let peakHeapAndBuffers = 0, peakRss = 0;
const sample = () => {
  if (live) globalThis.gc();
  const now = process.memoryUsage();
  peakHeapAndBuffers = Math.max(peakHeapAndBuffers, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers);
  peakRss = Math.max(peakRss, now.rss - base.rss);
};
const timer = setInterval(sample, 2);
const started = performance.now();
let code, message;
try { await client.users.list(); code = 'none'; } catch (error) { code = error.code; message = error.message; }
const ms = Math.round(performance.now() - started);
sample();
clearInterval(timer);
const mb = (n) => Math.round(n / 1048576 * 10) / 10;
process.stdout.write(JSON.stringify({ code, message, ms, peakHeapAndBuffersMB: mb(peakHeapAndBuffers), peakRssMB: mb(peakRss) }));
`;
