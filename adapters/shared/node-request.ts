/** What the node:http-based adapters read from a request besides its body: headers and path. */
import type { IncomingMessage } from 'node:http';
import type { HeaderSource } from '../../src/receive/index.js';

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
    // The usual spellings first: lower-casing makes a new string, on every request.
    if (name.length === 13 && (name === 'authorization' || name === 'Authorization' || name.toLowerCase() === 'authorization')) copies++;
  }
  return copies > 1 && req.headersDistinct ? req.headersDistinct : req.headers;
}

/** The path part of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
