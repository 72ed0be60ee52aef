/**
 * Who may see the live page. Its feed carries every delivery's body, so a web page the developer visits must
 * not read it. Two ways a browser could:
 * - DNS rebinding: a hostile name first resolves to its own server, then to 127.0.0.1, and the page it served
 *   fetches `/events` as same-origin. The request still names the hostile host in `Host`, so the page's
 *   routes answer only `Host` values that name this listener directly (loopback names, or `--host`'s own,
 *   with the port) and `421 Misdirected Request` to anything else. Webhook POSTs are not checked: through a
 *   tunnel they arrive with the tunnel's public host name, and they read nothing back.
 * - a cross-site request to the one route that acts (resend): it needs an `Origin` naming an allowed host.
 * The page itself is sent with a Content-Security-Policy that allows only its own script and style (by
 * hash) and connections to its own origin.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
/** Addresses that mean "every interface": no browser can be pointed at them by name. */
const WILDCARDS = new Set(['0.0.0.0', '[::]']);

/** The `Host` values the page answers: each loopback name and `--host`'s own, with the port (bare on port 80). */
export function allowedHosts(host: string, port: number): Set<string> {
  const own = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const names = WILDCARDS.has(own) ? LOOPBACK_NAMES : [...LOOPBACK_NAMES, own.toLowerCase()];
  const allowed = new Set<string>();
  for (const name of names) {
    allowed.add(`${name}:${port}`);
    if (port === 80) allowed.add(name);
  }
  return allowed;
}

export function hostAllowed(req: IncomingMessage, allowed: Set<string>): boolean {
  const host = req.headers.host;
  return typeof host === 'string' && allowed.has(host.toLowerCase());
}

/** A request that changes something must come from the page itself: its `Origin` names an allowed host. */
export function originAllowed(req: IncomingMessage, allowed: Set<string>): boolean {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin.startsWith('http://') && allowed.has(origin.slice('http://'.length).toLowerCase());
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The headers of every page route: no sniffing, no framing, no referrer, not cached. */
export function pageHeaders(script: string, style: string): Record<string, string> {
  const policy = [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(style)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'content-security-policy': policy,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}
