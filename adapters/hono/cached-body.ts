/**
 * The body of a Hono request, also when an earlier middleware read it (`c.req.json()`, `c.req.text()`, a
 * `validator('json')`): the stream is spent then, and what Hono kept of it in `c.req.bodyCache` is the body.
 */
import { WebhookError } from '../../src/dispatch/index.js';
import { type BodyReader, type WebhookBody } from '../../src/receive/index.js';
import { fetchBodyReader } from '../shared/fetch-body-reader.js';

/**
 * What Hono keeps of a body read through `c.req`, under the form it was first read as: a promise of it (Hono
 * types the values, it stores promises). Hono 4 keeps `c.req.json()`'s read as `text`; earlier versions kept
 * the parsed value under `json`.
 */
export interface HonoBodyCache {
  arrayBuffer?: unknown;
  blob?: unknown;
  text?: unknown;
  json?: unknown;
  formData?: unknown;
}

/** The part of Hono's request read here. */
export interface HonoRequestBody {
  raw: Request;
  bodyCache?: HonoBodyCache;
}

/**
 * The stream while it is unread (bounded by the receiver's limit, as the fetch adapter reads it), else Hono's
 * cache. A cached body is in memory already: the receiver still answers 413 for one over its limit.
 */
export function honoBodyReader(req: HonoRequestBody): BodyReader {
  const { raw } = req;
  if (!raw.bodyUsed) return fetchBodyReader(raw);
  return () => fromCache(req.bodyCache ?? {});
}

/**
 * The cached body, its exact bytes where Hono kept them. Text is the bytes decoded as UTF-8 (what the receiver
 * decodes them to as well); a parsed value (older Hono's `json`) can only be serialized again, as the Express
 * adapter does with express.json's. Nothing usable kept is the app's failure, never the sender's: 500.
 */
async function fromCache(cache: HonoBodyCache): Promise<WebhookBody> {
  if (cache.arrayBuffer !== undefined) return new Uint8Array((await cache.arrayBuffer) as ArrayBuffer);
  if (cache.blob !== undefined) return new Uint8Array(await ((await cache.blob) as Blob).arrayBuffer());
  if (cache.text !== undefined) return String(await cache.text);
  // A string too, so that the receiver's size limit applies to it.
  if (cache.json !== undefined) return JSON.stringify(await cache.json) ?? '';
  throw new WebhookError(
    'body_unavailable',
    'The request body was read before honoHandler ran and Hono kept none of it (read through c.req.raw, or as ' +
      'form data). Read it with c.req.json(), c.req.text() or c.req.arrayBuffer() in middleware instead. Answered 500 so that the platform delivers it again.',
  );
}
