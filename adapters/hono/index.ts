/**
 * Hono adapter: `app.post('/webhooks', honoHandler(webhooks))`, on every runtime Hono runs on.
 *
 * Hono's route decides the path, so there is no `path` option. On Cloudflare Workers the handlers run after
 * the answer under `c.executionCtx.waitUntil`; elsewhere (Node, Bun, Deno) `c.executionCtx` throws, and the
 * handlers run after the answer in the long-running process, or before it with `awaitHandlers`.
 *
 * The types describe the few members of Hono's `Context` used here, so that neither hono nor its types are
 * needed to compile this package or an application's use of it; a Hono `Context` is one.
 */
import { rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type HandleOptions, type Webhooks } from '../../src/receive/index.js';
import { honoBodyReader, type HonoBodyCache } from './cached-body.js';
import { requireReceiver } from '../shared/receiver-check.js';

/**
 * What the handler reads of Hono's `Context`: the Fetch API request, what Hono kept of a body a middleware
 * already read, and, on Workers, the execution context.
 */
export interface HonoContext {
  /** `routePath`: the pattern of the route matched (`/hooks/:app`), for telemetry's `http.route`. */
  req: { raw: Request; bodyCache?: HonoBodyCache; readonly routePath?: string };
  /** Hono's getter throws where the runtime has none (Node, Bun, Deno): read it guarded. */
  readonly executionCtx: { waitUntil(promise: Promise<unknown>): void };
}

export interface HonoHandlerOptions {
  /**
   * Where there is no `executionCtx` (Node, Bun, Deno), answer only once the handlers have finished: for
   * hosts that freeze or stop a process after the response. Default false.
   */
  awaitHandlers?: boolean;
  /** Bounds this handler's handlers (overrides the receiver's `handlerTimeoutMs`). */
  handlerTimeoutMs?: number;
}

/** A Hono handler: `(c) => Promise<Response>`. */
export type HonoHandler = (c: HonoContext) => Promise<Response>;

/** `c.executionCtx`, or undefined where Hono's getter throws because the runtime has none. */
function executionContextOf(c: HonoContext): HonoContext['executionCtx'] | undefined {
  try {
    return c.executionCtx;
  } catch {
    // None here: the handlers run in this process.
  }
}

/**
 * A Hono route handler for the receiver: checks and answers each delivery as every adapter does, then runs
 * the handlers (under `waitUntil` on Workers).
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { createWebhooks } from 'chat-webhooks';
 * import { honoHandler } from 'chat-webhooks/hono';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.id));
 *
 * const app = new Hono();
 * app.post('/webhooks', honoHandler(webhooks));
 * export default app;
 * ```
 */
export function honoHandler(webhooks: Webhooks, options: HonoHandlerOptions = {}): HonoHandler {
  requireReceiver('honoHandler', "app.post('/webhooks', honoHandler(webhooks))", webhooks);
  rejectUnknownOptions('honoHandler', options, Object.keys({ awaitHandlers: true, handlerTimeoutMs: true } satisfies Record<keyof HonoHandlerOptions, true>));
  const { awaitHandlers = false, handlerTimeoutMs } = options;
  const unrouted: HandleOptions = handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs };
  // The route is the pattern Hono matched, never the request's path. The options object is kept while the
  // pattern stays the same: no allocation per request.
  let routed: HandleOptions = unrouted;
  const optionsFor = (c: HonoContext): HandleOptions => {
    const route = c.req.routePath;
    if (!route) return unrouted;
    if (route !== routed.route) routed = { ...unrouted, route };
    return routed;
  };

  return async (c) => {
    const request = c.req.raw;
    const response = await webhooks.handle({ method: request.method, headers: request.headers, body: honoBodyReader(c.req) }, optionsFor(c));
    const executionCtx = executionContextOf(c);
    if (executionCtx) executionCtx.waitUntil(response.done);
    else if (awaitHandlers) await response.done;
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
