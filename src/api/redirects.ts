/**
 * Redirects, followed by the client itself and only within the origin it was made for.
 *
 * fetch's own `redirect: 'follow'` carries every header but `Authorization` to any host a `Location` names,
 * and a 307/308 sends the body again: the `apiKey`, `key` and `secret` headers would go to whoever the
 * service (or something in its place) points at. So every request goes out with `redirect: 'manual'`, and a
 * redirect is followed here only when its target has the same scheme, host and port, at most
 * `MAX_REDIRECTS` times, with the method and body rewritten as fetch would (303, and 301/302 after a POST,
 * become a GET without body; 307/308 keep both). Anything else is refused before a byte goes there.
 */
import { redact } from './errors.js';
import { discard } from './read-answer.js';

export const MAX_REDIRECTS = 5;

/** Thrown when a redirect is not followed; the message names the target's host, redacted. */
export class RedirectRefused extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** `fetch(url, init)`, following same-origin redirects only. */
export async function fetchWithinOrigin(fetchImpl: typeof fetch, url: string, init: RequestInit, secrets: readonly string[]): Promise<Response> {
  const origin = new URL(url).origin;
  let current = url;
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hops = 0; ; hops++) {
    const response = await fetchImpl(current, request);
    refuseFollowedByFetch(response, secrets);
    if (response.type === 'opaqueredirect') {
      throw new RedirectRefused('was redirected to a target this runtime does not reveal (an opaque redirect), so it was not followed', 0);
    }
    const location = isRedirect(response.status) ? response.headers.get('location') : null;
    if (location === null) return response;
    discard(response);
    const target = parseLocation(location, current);
    if (target?.origin !== origin) {
      throw new RedirectRefused(`was redirected (${response.status}) to ${describeTarget(location, current, secrets)}, another origin: not followed, so no credential went there`, response.status);
    }
    if (hops >= MAX_REDIRECTS) throw new RedirectRefused(`was redirected more than ${MAX_REDIRECTS} times`, response.status);
    current = target.href;
    request = afterRedirect(request, response.status);
  }
}

/**
 * An injected fetch that ignores `redirect: 'manual'` has already followed a redirect (`response.redirected`);
 * the client cannot take back what was sent, but it refuses the answer and says why. (Its `response.url`
 * alone proves nothing: a forwarding wrapper legitimately answers from another address.)
 */
function refuseFollowedByFetch(response: Response, secrets: readonly string[]): void {
  if (!response.redirected) return;
  throw new RedirectRefused(
    `was redirected to ${describeTarget(response.url, response.url, secrets)} by the fetch given in options.fetch, which does not honour redirect: 'manual'`,
    response.status,
  );
}

/** The method and body of the next hop, as fetch rewrites them. */
function afterRedirect(request: RequestInit, status: number): RequestInit {
  // The transport always gives the method (its verb); the default is fetch's own.
  const method = (request.method ?? 'GET').toUpperCase();
  // A GET after a 303 is turned into a GET without body, which it already was: only HEAD is kept as it is.
  const toGet = (status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST');
  if (!toGet) return request;
  const { body: _dropped, ...rest } = request;
  return { ...rest, method: 'GET' };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function parseLocation(location: string, base: string): URL | undefined {
  return URL.canParse(location, base) ? new URL(location, base) : undefined;
}

/** The target's host for a message: the Location is redacted before it is parsed, and its host after. */
function describeTarget(location: string, base: string, secrets: readonly string[]): string {
  const host = parseLocation(redact(location, secrets), base)?.host;
  return host ? `host ${redact(host, secrets)}` : 'an address that cannot be shown';
}
