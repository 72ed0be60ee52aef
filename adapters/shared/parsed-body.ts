/**
 * The body of a node:http request that a connect-style stack (Express, connect, polka) may have run through
 * a body parser first: what the parser left when it read the stream, else a reader over the stream.
 */
import type { IncomingMessage } from 'node:http';
import type { BodyReader, WebhookBody } from '../../src/receive/index.js';
import { nodeBodyReader } from './stream-reader.js';

/** What body parsers leave on a request. */
export interface ParsedRequest extends IncomingMessage {
  /** The exact bytes, when the app's parser `verify` hook kept them (a common recipe). */
  rawBody?: unknown;
  body?: unknown;
}

/**
 * The body as the receiver should see it. A stream something already read can never be read again, so
 * waiting on it would hang: then the best record of the body left on the request is used.
 */
export function bodyOf(req: ParsedRequest): WebhookBody | BodyReader {
  const { rawBody, body } = req;
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  // Both body-parser 1.x (Express 4, which also sets `req._body`) and 2.x call the next middleware only once
  // the stream has ended. A parser that skipped the request (another content type) left the stream unread,
  // whatever it put in `req.body` (1.x puts `{}`).
  if (!req.readableEnded) return nodeBodyReader(req);
  if (body === undefined) return ''; // the stream ended, and nothing was left of it
  // express.json turns an empty body into `{}`: the receiver must see it empty, as every other adapter does.
  if (req.headers['content-length'] === '0') return '';
  // express.raw gives a Buffer, express.text a string, express.json (and others) a parsed value. The bytes
  // of a parsed value are gone: the receiver can only check its size against Content-Length, and reports
  // it re-serialized.
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return parsedJsonString(req, body) ? JSON.stringify(body) : body;
  const isObject = typeof body === 'object';
  // `strict: false` JSON parsers also give null, numbers and booleans: their JSON text is the body.
  return isObject && body !== null ? body : JSON.stringify(body);
}

/**
 * Whether a string body is a JSON string that `express.json({ strict: false })` parsed (`"text"` arrived, `text`
 * is left), rather than text a text parser kept as it came. Only the declared length tells them apart: the
 * text's own UTF-8 length differs from it, while its JSON spelling matches it byte for byte. Without that
 * evidence the string is taken as the text it looks like.
 */
function parsedJsonString(req: ParsedRequest, body: string): boolean {
  const declared = Number(req.headers['content-length']);
  // A shortcut that spares JSON.stringify of a text parser's whole body; the comparison below is false in
  // these cases too (a JSON spelling is 2 or more bytes longer than its text; NaN and 0 equal no such length).
  if (!(declared > 0) || Buffer.byteLength(body) === declared) return false;
  return Buffer.byteLength(JSON.stringify(body)) === declared;
}
