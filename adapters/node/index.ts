/**
 * node:http adapter: `http.createServer(nodeMiddleware(webhooks))`, or mounted in any connect-style stack,
 * where a body parser ahead of it may already have read the body (then what it left is used, see `bodyOf`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type Webhooks } from '../../src/receive/index.js';
import { nodeHeaders, pathOf } from '../shared/node-request.js';
import { sendNodeResponse } from '../shared/response-writer.js';
import { bodyOf } from '../shared/parsed-body.js';
import { requireReceiver } from '../shared/receiver-check.js';

export interface NodeMiddlewareOptions {
  /** Only requests to this path are webhook deliveries; others go to `next()`, or get 404 without one. */
  path?: string;
}

export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * A `node:http` request listener (or Connect-style middleware) for the receiver.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createWebhooks } from 'chat-webhooks';
 * import { nodeMiddleware } from 'chat-webhooks/node';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.id));
 *
 * createServer(nodeMiddleware(webhooks, { path: '/webhooks' })).listen(3000);
 * ```
 */
export function nodeMiddleware(webhooks: Webhooks, options: NodeMiddlewareOptions = {}): NodeMiddleware {
  requireReceiver('nodeMiddleware', 'nodeMiddleware(webhooks, { path })', webhooks);
  rejectUnknownOptions('nodeMiddleware', options, Object.keys({ path: true } satisfies Record<keyof NodeMiddlewareOptions, true>));
  const { path } = options;
  // The path is the route, for telemetry's `http.route`.
  const handleOptions = path === undefined ? undefined : { route: path };
  return (req, res, next) => {
    if (path !== undefined && pathOf(req.url) !== path) {
      if (next) return next();
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Not found.');
      return;
    }
    webhooks.respond(
      { method: req.method ?? 'GET', headers: nodeHeaders(req), body: bodyOf(req) },
      (response) => sendNodeResponse(res, response),
      handleOptions,
    );
  };
}
