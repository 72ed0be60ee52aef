/**
 * Reading a node:http request body and writing a node:http response, shared by the node:http and Express
 * adapters (Express's req and res are node's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyReader, HeaderSource, WebhookResponse } from '../src/http.js';

/**
 * A reader for the request stream that stops at the size limit: past `maxBytes` it stops listening and
 * resolves with what it has (the receiver answers 413), so an oversized body is never buffered whole.
 * A stream that something else already consumed resolves empty instead of waiting forever.
 */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (maxBytes) =>
    new Promise<Uint8Array>((resolve, reject) => {
      if (req.readableEnded || req.destroyed) {
        resolve(new Uint8Array(0));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (body: Buffer) => {
        settled = true;
        resolve(body);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
        if (size > maxBytes) {
          // Whatever drains the rest of the request afterwards must not pile it up here.
          req.off('data', onData);
          req.pause();
          finish(Buffer.concat(chunks, size));
        }
      };
      // The listeners stay once the body is read: removing four from every request would cost more than
      // leaving them to the request's garbage. 'close' comes after every request, so it checks first.
      req.on('data', onData);
      req.on('end', () => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
      req.on('error', reject);
      req.on('close', () => {
        if (!settled) reject(new Error('The connection closed before the body was complete.'));
      });
    });
}

/**
 * The request's headers. `req.headers` keeps the first Authorization and drops any other copy, so when the
 * raw headers hold more than one, every copy is passed (`headersDistinct`) and the receiver refuses them.
 * Building `headersDistinct` for every request would cost more than this scan.
 */
export function nodeHeaders(req: IncomingMessage): HeaderSource {
  const raw = req.rawHeaders;
  let copies = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') copies++;
  }
  return copies > 1 && req.headersDistinct ? req.headersDistinct : req.headers;
}

/** Writes the receiver's response. */
export function sendNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

/** The path part of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
