/**
 * Idempotency keys: the platform sends no delivery id, so each event's key comes from the fields the platform
 * documents for its trigger (src/events/idempotency.ts), else from a digest of the exact body: identical
 * bytes are the same delivery. Every key starts with `<webhook id>:<trigger>:`.
 */
import { documentedKey, keyPrefix, type EventOf, type ParsedWebhook, type Trigger } from '../events/index.js';
import { sha256Base64 } from '#platform';

/**
 * Per-trigger key functions that replace the documented fields: `{ message_sent: (e) => e.data.message.id }`.
 * What one returns goes after `<webhook id>:<trigger>:`. Unknown triggers may be named too.
 */
export type IdempotencyKeys = { [T in Trigger]?: (event: EventOf<T>) => string } & {
  [trigger: string]: ((event: never) => string) | undefined;
};

/**
 * The event's idempotency key. `rawBody` is the body exactly as received; without it the fallback digest
 * is taken over the event serialized again, which recognises the same object but not every resend of it.
 */
export function idempotencyKey(event: ParsedWebhook, rawBody?: string | Uint8Array): string {
  return documentedKey(event) ?? bodyKey(event, rawBody);
}

function bodyKey(event: ParsedWebhook, rawBody: string | Uint8Array | undefined): string {
  return `${keyPrefix(event)}#${sha256Base64(rawBody ?? JSON.stringify(event))}`;
}

/** The key function a receiver uses: the overrides first, then `idempotencyKey`. */
export function keyFunction(overrides: IdempotencyKeys | undefined): (event: ParsedWebhook, rawBody?: string | Uint8Array) => string {
  if (!overrides || Object.keys(overrides).length === 0) return idempotencyKey;
  return (event, rawBody) => {
    const own = Object.hasOwn(overrides, event.trigger) ? overrides[event.trigger] : undefined;
    if (!own) return idempotencyKey(event, rawBody);
    const key = (own as (event: ParsedWebhook) => unknown)(event);
    // A key function that returns nothing usable must not merge distinct events: fall back to the body.
    return typeof key === 'string' && key !== '' ? keyPrefix(event) + key : bodyKey(event, rawBody);
  };
}
