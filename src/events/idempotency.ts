/**
 * The fields that identify one event where the platform documents them (issue 11). Several deliveries of one
 * event share these values; two different events never do. Where a trigger has no such fields, or one is
 * missing, the receiver falls back to a digest of the exact body (src/receive/idempotency.ts).
 *
 * `message_sent` alone uses the message id: receipts, reactions, edits and deletes of one message are
 * distinct events that carry the same message id.
 */
import type { ParsedWebhook } from './types.js';

/** Paths into `data`, per trigger; the README's table of keys is this object. */
export const idempotencyFields: Readonly<Record<string, readonly (readonly string[])[]>> = Object.freeze({
  message_sent: [['message', 'id']],
  call_initiated: [['call', 'id'], ['call', 'sentAt']],
  call_busy: [['call', 'id'], ['call', 'sentAt']],
  call_cancelled: [['call', 'id'], ['call', 'sentAt']],
  call_rejected: [['call', 'id'], ['call', 'sentAt']],
  call_unanswered: [['call', 'id'], ['call', 'sentAt']],
  call_started: [['sessionId'], ['created_at']],
  meeting_started: [['sessionId'], ['created_at']],
  call_participant_joined: [['sessionId'], ['occupant', 'joined_at']],
  meeting_participant_joined: [['sessionId'], ['occupant', 'joined_at']],
  call_participant_left: [['sessionId'], ['occupant', 'left_at']],
  meeting_participant_left: [['sessionId'], ['occupant', 'left_at']],
  call_ended: [['sessionId'], ['destroyed_at']],
  meeting_ended: [['sessionId'], ['destroyed_at']],
  recording_generated: [['sessionId'], ['startTime']],
});

function valueAt(data: unknown, path: readonly string[]): string | undefined {
  let value = data;
  // A scalar on the way reads as no value: none of the documented names is a property of a string or number.
  for (const step of path) value = (value as Record<string, unknown> | null | undefined)?.[step];
  return idText(value);
}

/** An id or time as key text: a non-empty string, or a finite number ("1440" and 1440 spell the same key). */
function idText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (Number.isFinite(value)) return String(value); // a number: isFinite does not convert
  return undefined;
}

/**
 * The envelope's `appId` as the key and the credential check read it: a non-empty string, or a finite number
 * read as its decimal text (`7` and `"7"` are one app); anything else (absent, empty, null, an object) is no app.
 */
export function appIdOf(event: { readonly appId?: unknown }): string | undefined {
  return idText(event.appId);
}

/**
 * `<appId>:<webhook id>:<trigger>:`, the start of every key, so keys of two apps, webhooks or triggers never
 * meet: webhook ids are chosen by each customer and message ids are unique only within an app. Without an
 * `appId` the key starts at the webhook id; without either, at the trigger (never with a bare colon). With an
 * `appId` but no webhook id, the webhook's place stays, empty (`<appId>::<trigger>:`), so such a key never reads
 * as another event's webhook id.
 */
export function keyPrefix(event: ParsedWebhook): string {
  const webhook = typeof event.webhook === 'string' ? event.webhook : '';
  const app = appIdOf(event);
  if (app !== undefined) return `${app}:${webhook}:${event.trigger}:`;
  return webhook === '' ? `${event.trigger}:` : `${webhook}:${event.trigger}:`;
}

/**
 * The same paths, looked up by trigger in a Map: a trigger parsed from a body is a new string each time, and a
 * Map hashes it once (the dispatcher's lookups reuse the hash), where `Object.hasOwn` and the property read
 * each searched the string table for it.
 */
const fieldPaths = new Map(Object.entries(idempotencyFields));

/** The key from the documented fields, or undefined when the trigger has none or one is missing. */
export function documentedKey(event: ParsedWebhook): string | undefined {
  const paths = fieldPaths.get(event.trigger);
  if (paths === undefined) return undefined;
  let key = keyPrefix(event);
  for (let i = 0; i < paths.length; i++) {
    const value = valueAt(event.data, paths[i] as readonly string[]);
    if (value === undefined) return undefined;
    key += i === 0 ? value : `:${value}`;
  }
  return key;
}
