/**
 * fetch adapter: a `(Request, ctx?) => Promise<Response>` handler for runtimes built on the Fetch API.
 *
 *   Next.js (app router)  export const POST = fetchHandler(webhooks);
 *                         On Vercel, let handlers finish after the answer with `waitUntil` from '@vercel/functions':
 *                         export const POST = (request: Request) => handler(request, { waitUntil });
 *   Cloudflare Workers    export default { fetch: (request, env, ctx) => handler(request, ctx) };
 *   Bun                   Bun.serve({ fetch: (request) => handler(request) });
 *   Deno                  Deno.serve((request) => handler(request));
 *   Hono                  use chat-webhooks/hono: app.post('/webhooks', honoHandler(webhooks));
 */
import { rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type HandleOptions, type Webhooks } from '../../src/receive/index.js';
import { fetchBodyReader } from '../shared/fetch-body-reader.js';
import { requireReceiver } from '../shared/receiver-check.js';

export { fetchBodyReader };

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

/**
 * A Fetch API handler for the receiver: `(request, ctx?) => Promise<Response>`, for Next.js, Bun, Deno and
 * Cloudflare Workers (the handlers run under `ctx.waitUntil` when the runtime gives one).
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { fetchHandler } from 'chat-webhooks/fetch';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.id));
 *
 * // Next.js app router: app/webhooks/route.ts
 * export const POST = fetchHandler(webhooks);
 * ```
 */
export function fetchHandler(webhooks: Webhooks, options: FetchHandlerOptions = {}): FetchHandler {
  requireReceiver('fetchHandler', 'fetchHandler(webhooks, { path })', webhooks);
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
