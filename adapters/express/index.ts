/**
 * Express adapter (Express 5; Express 4 works too, as only what both share is used: req and res are node's).
 *
 *   app.post('/webhooks', expressMiddleware(webhooks));
 *   app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
 *
 * Mount it before any app-wide body parser (`express.json()` and friends), or on its own route: it then
 * streams the body itself, after the auth check, stopping at `maxBodyBytes`. Behind a body parser it works
 * from what the parser left (see `bodyOf`), with two costs: the parser reads unauthenticated bodies, and a
 * body the parser refuses for its own reasons (its `limit`, say) never reaches the receiver.
 *
 * The middleware is a pair of handlers, which Express flattens wherever it takes middleware: the second
 * catches the parse error of a body parser that ran before it, so malformed JSON is still answered by the
 * receiver (400, with the raw body in onError) rather than by the app's error page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rejectUnknownOptions, type BodyReader, type WebhookBody, type Webhooks } from '../../src/receive/index.js';
import { nodeHeaders, pathOf } from '../shared/node-request.js';
import { sendNodeResponse } from '../shared/response-writer.js';
import { nodeBodyReader } from '../shared/stream-reader.js';

export interface ExpressMiddlewareOptions {
  /**
   * Only requests to this path are webhook deliveries; others go to `next()`. Compared with `req.url`, which
   * Express makes relative to where the middleware is mounted (`app.use('/api', …)` sees `/webhooks` for
   * `/api/webhooks`). Not needed when the route itself is mounted at the path.
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

/** What body parsers leave on a request. */
interface ParsedRequest extends IncomingMessage {
  /** The exact bytes, when the app's parser `verify` hook kept them (a common recipe). */
  rawBody?: unknown;
  body?: unknown;
  /** body-parser 1.x (Express 4) marks a request whose body it read. */
  _body?: unknown;
}

export function expressMiddleware(webhooks: Webhooks, options: ExpressMiddlewareOptions = {}): ExpressWebhookMiddleware {
  rejectUnknownOptions('expressMiddleware', options, ['path']);
  const { path } = options;
  const elsewhere = (req: IncomingMessage) => path !== undefined && pathOf(req.url) !== path;

  const respond = (req: IncomingMessage, res: ServerResponse, next: ExpressNext, body: WebhookBody | BodyReader) =>
    webhooks
        .handle({ method: req.method ?? 'GET', headers: nodeHeaders(req), body })
      .then((response) => sendNodeResponse(res, response), next);

  const handler: ExpressWebhookHandler = async (req, res, next) => {
    if (elsewhere(req)) return next();
    return respond(req, res, next, bodyOf(req));
  };

  const onParseError: ExpressWebhookErrorHandler = async (error, req, res, next) => {
    const text = parseFailureBody(error);
    if (text === undefined || elsewhere(req) || res.headersSent) return next(error);
    const { rawBody } = req as ParsedRequest;
    return respond(req, res, next, typeof rawBody === 'string' || rawBody instanceof Uint8Array ? rawBody : text);
  };

  return [handler, onParseError];
}

/**
 * The body as the receiver should see it. A stream something already read can never be read again, so
 * waiting on it would hang: then the best record of the body left on the request is used.
 */
function bodyOf(req: ParsedRequest): WebhookBody | BodyReader {
  const { rawBody, body } = req;
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  // body-parser 2 (Express 5) leaves no flag: its reading ends the stream. A parser that skipped the request
  // (another content type) left the stream unread, whatever it put in `req.body` (1.x puts `{}`).
  const consumed = req._body === true || req.readableEnded;
  if (!consumed || body === undefined) return nodeBodyReader(req); // resolves empty for an ended stream
  // express.raw gives a Buffer, express.text a string, express.json (and others) a parsed value. The bytes
  // of a parsed value are gone: the receiver can only check its size against Content-Length, and reports
  // it re-serialized.
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return typeof body === 'object' && body !== null ? body : JSON.stringify(body) ?? '';
}

/** The text a body parser failed to parse (body-parser's `entity.parse.failed`), if that is the error. */
function parseFailureBody(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, body } = error as { type?: unknown; body?: unknown };
  return type === 'entity.parse.failed' && typeof body === 'string' ? body : undefined;
}
