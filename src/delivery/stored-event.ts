/**
 * Durable inboxes store an event as its raw body only: the event handlers get is that body parsed (the
 * receiver hands them the parsed body itself), and storing both would double every put's writes and every
 * claim's reads. These read the event back and refuse, at the put, a body it could not be read back from.
 */
import type { InboxClaim } from './port.js';

/**
 * Whether text can be an envelope's JSON: it starts with `{` (after a byte order mark or blanks: `\s` takes
 * U+FEFF too). A body parser's value that could not be serialized has only a placeholder text, which would not
 * parse back.
 */
export function isStorableBody(rawBody: string): boolean {
  return /^\s*\{/.test(rawBody);
}

/** The error a put rejects with for a body `isStorableBody` refused. */
export function unstorableBody(store: string): TypeError {
  return new TypeError(`The ${store} inbox stores an event as its raw body, and this one has no JSON text.`);
}

/** The stored event: the raw body parsed as the receiver parsed it (a leading byte order mark skipped). */
export function eventOfBody(rawBody: string): InboxClaim['event'] {
  return JSON.parse(rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody) as InboxClaim['event'];
}
