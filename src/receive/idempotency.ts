/**
 * Idempotency keys: the platform sends no delivery id, so each event's key comes from the fields the platform
 * documents for its trigger (src/events/idempotency.ts), else from a digest of the exact body: identical
 * bytes are the same delivery. Every key starts with `<appId>:<webhook id>:<trigger>:`, each part escaped
 * (keyPart and keyPrefix in src/events/idempotency.ts), so no two events' parts ever give one key.
 */
import { documentedKey, keyPart, keyPrefix, type EventOf, type ParsedWebhook, type Trigger } from '../events/index.js';
import { sha256Base64 } from '#platform';

/**
 * Per-trigger key functions that replace the documented fields: `{ message_sent: (e) => e.data.message.id }`.
 * What one returns goes after `<appId>:<webhook id>:<trigger>:`, escaped as one part (a `:` in it is `%3A`).
 * Unknown triggers may be named too.
 */
export type IdempotencyKeys = { [T in Trigger]?: (event: EventOf<T>) => string } & {
  [trigger: string]: ((event: never) => string) | undefined;
};

/**
 * The event's idempotency key. `rawBody` is the body exactly as received; without it the fallback digest
 * is taken over the event serialized again, which recognises the same object but not every resend of it.
 *
 * @example
 * ```ts
 * import { idempotencyKey, parseWebhook } from 'chat-webhooks';
 *
 * const event = parseWebhook(rawBody);
 * idempotencyKey(event, rawBody); // '2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421': app, webhook, trigger, message id
 * ```
 */
export function idempotencyKey(event: ParsedWebhook, rawBody?: string | Uint8Array): string {
  return documentedKey(event) ?? bodyKey(event, rawBody);
}

function bodyKey(event: ParsedWebhook, rawBody: string | Uint8Array | undefined): string {
  return `${keyPrefix(event)}#${sha256Base64(rawBody ?? JSON.stringify(event))}`;
}

/** How a receiver names events: by fields where it can, else by a digest of the body. */
export interface KeyFunctions {
  /** The key from fields (an override, else the documented ones), or undefined: then only the body names it. */
  fieldKeyOf(event: ParsedWebhook): string | undefined;
  /** The full key: the field key, else `<appId>:<webhook id>:<trigger>:#<digest of the body>`. */
  keyOf(event: ParsedWebhook, rawBody?: string | Uint8Array): string;
}

/** The key functions a receiver uses: the overrides first, then the documented fields, then the body. */
export function keyFunctions(overrides: IdempotencyKeys | undefined): KeyFunctions {
  const fieldKeyOf = overrides ? overriddenKey(overrides) : documentedKey;
  return { fieldKeyOf, keyOf: (event, rawBody) => fieldKeyOf(event) ?? bodyKey(event, rawBody) };
}

function overriddenKey(overrides: IdempotencyKeys): (event: ParsedWebhook) => string | undefined {
  return (event) => {
    const own = Object.hasOwn(overrides, event.trigger) ? overrides[event.trigger] : undefined;
    if (!own) return documentedKey(event);
    let key: unknown;
    try {
      key = (own as (event: ParsedWebhook) => unknown)(event);
    } catch {
      // A key function that throws names nothing: `key` stays undefined, and the body names the event.
    }
    // A key function that returns nothing usable (or throws) must not merge distinct events: the body names it.
    return typeof key === 'string' && key !== '' ? keyPrefix(event) + keyPart(key) : undefined;
  };
}
