/**
 * The live page's routes: `GET /` (the page, rendered with the newest deliveries), `GET /events` (the
 * feed), `POST /_listen/resend/<seq>` (send a delivery to `--forward` again). Each answers only a `Host` that
 * names this listener (`421` otherwise, guard.ts); resend also wants the page's own `Origin`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveryResult } from '../post.js';
import { hostAllowed, originAllowed, pageHeaders } from './guard.js';
import { PAGE_ASSETS, pageHtml } from './html.js';
import type { LiveFeed } from './live-feed.js';

/** How much of the history the page is rendered with; the feed brings the rest as it comes. */
const RENDERED_BYTES = 2 * 1024 * 1024;

export interface PageRoutes {
  feed: LiveFeed<Record<string, string>>;
  /** The `Host` values the page answers (guard.ts `allowedHosts`). */
  allowed: Set<string>;
  user?: string;
  forward?: string;
  /** Sends a kept delivery to `--forward` again; undefined when it is no longer kept. */
  resend(seq: number): Promise<DeliveryResult | undefined>;
}

const HEADERS = pageHeaders(PAGE_ASSETS.script, PAGE_ASSETS.style);

/** The page's own routes: reads, and `/_listen/` (never a webhook path). */
export function isPageRequest(req: IncomingMessage): boolean {
  return req.method === 'GET' || req.method === 'HEAD' || (req.url ?? '').startsWith('/_listen/');
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}

async function resend(res: ServerResponse, routes: PageRoutes, seq: number): Promise<void> {
  if (!routes.forward) return answer(res, 404, 'listen runs without --forward: there is nowhere to resend to.');
  const result = await routes.resend(seq);
  if (!result) return answer(res, 410, `Delivery #${seq} is no longer kept.`);
  res.writeHead(200, { ...HEADERS, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ url: routes.forward, status: result.status, ms: result.ms, error: result.error }));
}

export function servePage(req: IncomingMessage, res: ServerResponse, routes: PageRoutes): void {
  if (!hostAllowed(req, routes.allowed)) {
    // Drain whatever was sent: the answer is all the client gets.
    req.resume();
    const first = routes.allowed.values().next().value as string;
    return answer(res, 421, `Misdirected request: the live page answers only at http://${first}/ and the other loopback names.`);
  }
  const url = new URL(req.url ?? '/', 'http://listen.invalid');
  const resendMatch = /^\/_listen\/resend\/(\d+)$/.exec(url.pathname);
  if (req.method === 'POST' && resendMatch) {
    req.resume();
    if (!originAllowed(req, routes.allowed)) return answer(res, 403, 'Resend is accepted only from the live page itself.');
    void resend(res, routes, Number(resendMatch[1]));
  } else if (req.method === 'POST') {
    answer(res, 404, 'Not found.');
  } else if (url.pathname === '/') {
    const page = pageHtml({ instance: routes.feed.instance, user: routes.user, forward: routes.forward, records: routes.feed.recent(RENDERED_BYTES) });
    res.writeHead(200, { ...HEADERS, 'content-type': 'text/html; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : page);
  } else if (url.pathname === '/events' && req.method === 'HEAD') {
    res.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream; charset=utf-8' });
    res.end();
  } else if (url.pathname === '/events') {
    const after = Number(url.searchParams.get('after') ?? 0);
    routes.feed.subscribe(req, res, Number.isSafeInteger(after) ? after : 0, HEADERS);
  } else {
    answer(res, 404, 'Not found. POST webhooks to any path; the live page is at /.');
  }
}
