/**
 * fetch adapter: a `(Request, ctx?) => Promise<Response>` handler for runtimes built on the Fetch API.
 *
 *   Next.js (app router)  export const POST = fetchHandler(webhooks);
 *                         On Vercel, let handlers finish after the answer with `waitUntil` from '@vercel/functions':
 *                         export const POST = (request: Request) => handler(request, { waitUntil });
 *   Cloudflare Workers    export default { fetch: (request, env, ctx) => handler(request, ctx) };
 *   Bun                   Bun.serve({ fetch: (request) => handler(request) });
 *   Deno                  Deno.serve((request) => handler(request));
 *   Hono                  `c.executionCtx` throws outside Workers, so read it guarded:
 *                         const executionCtxOf = (c) => { try { return c.executionCtx; } catch { return undefined; } };
 *                         app.post('/webhooks', (c) => handler(c.req.raw, executionCtxOf(c)));
 */
import { rejectUnknownOptions, type BodyReader, type HandleOptions, type Webhooks } from '../../src/receive/index.js';

/** What the runtime passes beside the request; only `waitUntil` is used (Workers' ExecutionContext has it). */
export interface FetchContext {
  waitUntil?(promise: Promise<unknown>): void;
}

export interface FetchHandlerOptions {
  /** Only requests to this path (the URL's pathname) are deliveries; others are answered 404. */
  path?: string;
  /**
   * Without `ctx.waitUntil`, answer only once the handlers have finished: for runtimes that freeze or stop
   * after the response and offer no waitUntil. Default false: long-running servers (Bun, Deno, Node) keep
   * running the handlers after the answer.
   */
  awaitHandlers?: boolean;
  /** Bounds this handler's handlers (overrides the receiver's `handlerTimeoutMs`). */
  handlerTimeoutMs?: number;
}

export type FetchHandler = (request: Request, ctx?: FetchContext) => Promise<Response>;

export function fetchHandler(webhooks: Webhooks, options: FetchHandlerOptions = {}): FetchHandler {
  rejectUnknownOptions('fetchHandler', options, Object.keys({ path: true, awaitHandlers: true, handlerTimeoutMs: true } satisfies Record<keyof FetchHandlerOptions, true>));
  const { path, awaitHandlers = false, handlerTimeoutMs } = options;
  // The path is the route, for telemetry's `http.route`.
  const handleOptions: HandleOptions = { ...(handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs }), ...(path === undefined ? {} : { route: path }) };

  return async (request, ctx) => {
    if (path !== undefined && new URL(request.url).pathname !== path) {
      return new Response('Not found.', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
    const response = await webhooks.handle(
      { method: request.method, headers: request.headers, body: fetchBodyReader(request) },
      handleOptions,
    );
    if (typeof ctx?.waitUntil === 'function') ctx.waitUntil(response.done);
    else if (awaitHandlers) await response.done;
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}

/**
 * Reads the request stream up to the limit: past `maxBytes` it cancels the stream and resolves with what it
 * has (the receiver answers 413), so an oversized body is never pulled whole.
 */
export function fetchBodyReader(request: Request): BodyReader {
  return async (maxBytes) => {
    // A body something else already read resolves empty instead of throwing on a locked stream.
    if (!request.body || request.bodyUsed) return new Uint8Array(0);
    const reader = request.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes) {
        // Not awaited: a source may take its time to tear down, and the answer does not depend on it.
        reader.cancel().catch(() => undefined);
        break;
      }
    }
    return concat(chunks, size);
  };
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
