/** Closing a node:http connection without resetting it under a sender that is still sending its body. */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { finished } from 'node:stream';
import type { WebhookResponse } from '../../src/receive/index.js';

/** How long the rest of a refused body is read and dropped before the socket is closed regardless. */
export const LINGER_MS = 500;

/**
 * The refusals a sender acts on by changing its body or retrying later. An unauthenticated sender (401) and
 * one too slow to send its body (408) are cut off at once: nothing more of theirs is read.
 */
const LINGERING_STATUSES = new Set([413, 415, 503]);

/**
 * Prepares `req`'s socket for a refusal that closes the connection while its body is still arriving. Closed
 * at once, the socket's unread bytes make the kernel send a reset, and most clients (undici's fetch among
 * them) then report EPIPE or ECONNRESET instead of the response. Node closes such a connection through
 * `socket.destroySoon()` once the response is written; this socket's copy first reads and drops the rest of
 * the body, for at most LINGER_MS (a trickling sender is still cut off), then closes. The response itself is
 * not delayed.
 */
export function lingerIfClosing(req: IncomingMessage, response: WebhookResponse): void {
  // Node calls destroySoon() only for a response that closes the connection; the check keeps the copy off
  // sockets that stay open (a 503 of a failed commit has no Connection: close).
  if (req.complete || !LINGERING_STATUSES.has(response.status) || response.headers.connection !== 'close') return;
  const socket = req.socket;
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    // Called again once the body ended or the timer fired, whichever comes second: a no-op by then.
    const close = () => {
      clearTimeout(timer);
      Socket.prototype.destroySoon.call(this);
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    this.end();
    // Also called back at once for a body that ended meanwhile, and when the connection closes first.
    finished(req, close);
    // Node drops a body nobody reads, but not one our reader paused at the size limit: without a 'data'
    // listener left, resuming drops it too.
    req.resume();
  };
}
