/**
 * Express adapter (Express 5 and Express 4 / body-parser 1.x: only what both share is used, req and res are
 * node's).
 *
 *   app.use('/webhooks', expressMiddleware(webhooks));                  // anywhere, before or after parsers
 *   app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
 *   app.post('/webhooks', expressMiddleware(webhooks));                 // before any app-wide body parser
 *
 * Ahead of any body parser it streams the body itself, after the auth check, stopping at `maxBodyBytes`.
 * Behind one it works from what the parser left (see `bodyOf`); the parser then reads unauthenticated bodies.
 *
 * The middleware is a pair of handlers, which Express flattens wherever it takes middleware: the second
 * catches the error of a body parser that ran before it (malformed JSON, a charset or coding it refuses), so
 * that body gets the receiver's answer (see `refusedBody`) rather than the app's error page. Express only
 * hands such an error to error handlers mounted with `use` at the same level as the parser or deeper: a
 * route (`app.post`) or a router mounted after an app-wide parser never sees it, hence the warning below.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type BodyReader, type HandleOptions, type WebhookBody, type Webhooks } from '../../src/receive/index.js';
import { nodeHeaders, pathOf } from '../shared/node-request.js';
import { sendNodeResponse } from '../shared/response-writer.js';
import { bodyOf, type ParsedRequest } from '../shared/parsed-body.js';
import { requireReceiver } from '../shared/receiver-check.js';

export interface ExpressMiddlewareOptions {
  /**
   * Only requests to this path are webhook deliveries; others go to `next()`. Compared with `req.url`, which
   * Express makes relative to where the middleware is mounted (`app.use('/api', …)` sees `/webhooks` for
   * `/api/webhooks`). Not needed when the route itself is mounted at the path. At the app's root it is also
   * telemetry's `http.route`; under a mount, give `openTelemetry({ route })`.
   */
  path?: string;
}

export type ExpressNext = (error?: unknown) => void;
export type ExpressWebhookHandler = (req: IncomingMessage, res: ServerResponse, next: ExpressNext) => Promise<void>;
export type ExpressWebhookErrorHandler = (
  error: unknown,
  req: IncomingMessage,
  res: ServerResponse,
  next: ExpressNext,
) => Promise<void>;
/** Pass it to `app.use`, `app.post`, `router.all`…: Express flattens the pair. */
export type ExpressWebhookMiddleware = [ExpressWebhookHandler, ExpressWebhookErrorHandler];

/**
 * Express middleware for the receiver: reads the body itself (or takes what a body parser left), answers with
 * the status table, and runs the handlers after the answer.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createWebhooks } from 'chat-webhooks';
 * import { expressMiddleware } from 'chat-webhooks/express';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.id));
 *
 * const app = express();
 * app.use('/webhooks', expressMiddleware(webhooks));
 * app.listen(3000);
 * ```
 */
export function expressMiddleware(webhooks: Webhooks, options: ExpressMiddlewareOptions = {}): ExpressWebhookMiddleware {
  requireReceiver('expressMiddleware', "app.use('/webhooks', expressMiddleware(webhooks))", webhooks);
  rejectUnknownOptions('expressMiddleware', options, Object.keys({ path: true } satisfies Record<keyof ExpressMiddlewareOptions, true>));
  const { path } = options;
  const elsewhere = (req: IncomingMessage) => path !== undefined && pathOf(req.url) !== path;

  // The route for telemetry's `http.route`: from configuration, never the request's text (Express matches
  // paths case-insensitively and fills a mount's parameters, so `req.baseUrl` is what the sender spelled: one
  // series per spelling). At the app's root it is `path`, or the pattern of the route the middleware is
  // mounted as; under a mount (a `baseUrl`), whose pattern Express does not tell, there is none and
  // `openTelemetry({ route })` applies. Option objects are kept: no allocation per request.
  const atPath: HandleOptions | undefined = path === undefined ? undefined : { route: path };
  const unrouted: HandleOptions = {};
  let routed = { route: '' };
  const optionsFor = (req: IncomingMessage): HandleOptions => {
    const { baseUrl, route } = req as { baseUrl?: string; route?: { path?: unknown } };
    if (baseUrl) return unrouted;
    if (atPath) return atPath;
    const pattern = route?.path;
    if (typeof pattern !== 'string') return unrouted;
    if (pattern !== routed.route) routed = { route: pattern };
    return routed;
  };

  const respond = (req: IncomingMessage, res: ServerResponse, next: ExpressNext, body: WebhookBody | BodyReader) =>
    webhooks
      .handle({ method: req.method ?? 'GET', headers: nodeHeaders(req), body }, optionsFor(req))
      .then((response) => sendNodeResponse(res, response), next);

  let warned = false;
  const handler: ExpressWebhookHandler = async (req, res, next) => {
    if (elsewhere(req)) return next();
    const body = bodyOf(req);
    if (!warned && typeof body !== 'function' && (req as { route?: unknown }).route !== undefined) {
      warned = true;
      process.emitWarning(ROUTE_BEHIND_PARSER, { code: 'CHAT_WEBHOOKS_ROUTE_BEHIND_PARSER' });
    }
    return respond(req, res, next, body);
  };

  const onParseError: ExpressWebhookErrorHandler = async (error, req, res, next) => {
    const body = elsewhere(req) || res.headersSent ? undefined : refusedBody(error, req, webhooks.maxBodyBytes);
    if (body === undefined) return next(error);
    return respond(req, res, next, body);
  };

  return [handler, onParseError];
}

/**
 * Express skips route handlers while an error is pending, so a route mount never sees the error of a body
 * parser mounted app-wide before it: the app's error page would answer malformed bodies.
 */
const ROUTE_BEHIND_PARSER =
  'chat-webhooks: expressMiddleware is mounted as a route (app.post, app.all, router.post…) after a body parser ' +
  "that already read the body. Deliveries work, but a body the parser refuses gets the app's error page, and " +
  "onError never hears of it. Mount it with app.use('/webhooks', expressMiddleware(webhooks)), or before the parser.";


/**
 * What the receiver should judge in place of a body that a body parser (body-parser 1.x or 2.x) refused, or
 * undefined for an error that is the app's to answer. The receiver's own checks come first, so each such body
 * gets the answer every other adapter gives it:
 * - malformed JSON: the text the parser failed on (400, with the raw body in onError);
 * - a charset or content coding the parser does not take, or a form with too many fields: no body, as the
 *   receiver refuses these from the headers (415);
 * - a body over the parser's limit: the receiver's 413 when it is over `maxBodyBytes` too (from
 *   Content-Length). A body within `maxBodyBytes` that only the app's own limit refuses stays the app's.
 */
function refusedBody(error: unknown, req: ParsedRequest, maxBodyBytes: number): WebhookBody | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, body } = error as { type?: unknown; body?: unknown };
  switch (type) {
    case 'entity.parse.failed': {
      const { rawBody } = req;
      if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
      return typeof body === 'string' ? body : undefined;
    }
    case 'charset.unsupported':
    case 'encoding.unsupported':
    case 'parameters.too.many':
      return '';
    case 'entity.too.large':
      return Number(req.headers['content-length']) > maxBodyBytes ? '' : undefined;
    default:
      return undefined;
  }
}
