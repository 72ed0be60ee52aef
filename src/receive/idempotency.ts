/**
 * Idempotency keys: the platform sends no delivery id, so each event's key comes from the fields the platform
 * documents for its trigger (src/events/idempotency.ts), else from a digest of the exact body: identical
 * bytes are the same delivery. Every key starts with `<appId>:<webhook id>:<trigger>:`, each part escaped
 * (keyPart and keyPrefix in src/events/idempotency.ts), so no two events' parts ever give one key.
 */
import { documentedKey, keyPart, keyPrefix, type EventOf, type ParsedWebhook, type Trigger } from '../events/index.js';
import { sha256Base64, utf8Length } from '#platform';

/**
 * The longest key written out, in UTF-8 bytes. Ids are the sender's text and escaping can triple them, while
 * stores cap what they index: PostgreSQL's primary key refuses an entry over 2704 bytes (failing every event
 * of the batch it was written with), DynamoDB a partition key over 2048. A longer key is its prefix and a
 * digest of the rest (`<prefix>##<digest>`), or, where the prefix alone is too long, `##<digest>` of it all.
 */
export const MAX_KEY_BYTES = 1024;
/** A digest and its `##`: 46 characters. */
const DIGESTED_BYTES = 46;

/**
 * The key as stores take it. Both digested forms are apart from every written-out key and from each other:
 * no part holds a `#` (keyPart escapes it), the body digest is one `#` and base64 (which has no `#`), and a
 * key starts with its app's part, never with `#`.
 */
function bounded(key: string, event: ParsedWebhook): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: the usual key needs no count.
  if (key.length * 3 <= MAX_KEY_BYTES || utf8Length(key) <= MAX_KEY_BYTES) return key;
  const prefix = keyPrefix(event);
  if (utf8Length(prefix) + DIGESTED_BYTES > MAX_KEY_BYTES) return `##${sha256Base64(key)}`;
  return `${prefix}##${sha256Base64(key.slice(prefix.length))}`;
}

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
  return boundedDocumentedKey(event) ?? bodyKey(event, rawBody);
}

function boundedDocumentedKey(event: ParsedWebhook): string | undefined {
  const key = documentedKey(event);
  return key === undefined ? undefined : bounded(key, event);
}

function bodyKey(event: ParsedWebhook, rawBody: string | Uint8Array | undefined): string {
  return bounded(`${keyPrefix(event)}#${sha256Base64(rawBody ?? JSON.stringify(event))}`, event);
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
  const fieldKeyOf = overrides ? overriddenKey(overrides) : boundedDocumentedKey;
  return { fieldKeyOf, keyOf: (event, rawBody) => fieldKeyOf(event) ?? bodyKey(event, rawBody) };
}

function overriddenKey(overrides: IdempotencyKeys): (event: ParsedWebhook) => string | undefined {
  return (event) => {
    const own = Object.hasOwn(overrides, event.trigger) ? overrides[event.trigger] : undefined;
    if (!own) return boundedDocumentedKey(event);
    let key: unknown;
    try {
      key = (own as (event: ParsedWebhook) => unknown)(event);
    } catch {
      // A key function that throws names nothing: `key` stays undefined, and the body names the event.
    }
    // A key function that returns nothing usable (or throws) must not merge distinct events: the body names it.
    return typeof key === 'string' && key !== '' ? bounded(keyPrefix(event) + keyPart(key), event) : undefined;
  };
}
