/**
 * The fields that identify one event where the platform documents them (issue 11). Several deliveries of one
 * event share these values; two different events never do. Where a trigger has no such fields, or one is
 * missing, the receiver falls back to a digest of the exact body (src/receive/idempotency.ts).
 *
 * The message triggers use `data.message.id`, as the platform documents: for `message_sent` the message, for
 * `message_edited` / `message_deleted` the action message (its own id, one per edit and per delete), so a
 * delivery and the same event rebuilt from the REST list of messages (chat-webhooks/reconcile) share a key.
 * Receipts and reactions carry the message id of what they are about, not their own: they keep the digest.
 */
import type { ParsedWebhook } from './types.js';

/** Paths into `data`, per trigger; the key table of docs/durable-delivery.md is this object. */
export const idempotencyFields: Readonly<Record<string, readonly (readonly string[])[]>> = Object.freeze({
  message_sent: [['message', 'id']],
  message_edited: [['message', 'id']],
  message_deleted: [['message', 'id']],
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
  // The first step read apart from the others: one read of `data` and `message` by every name of every path
  // goes megamorphic (~100 instructions a read, callgrind), two reads that each see one kind of object do not.
  let value = (data as Record<string, unknown> | null | undefined)?.[path[0] as string];
  // A scalar on the way reads as no value: none of the documented names is a property of a string or number.
  for (let i = 1; i < path.length; i++) value = (value as Record<string, unknown> | null | undefined)?.[path[i] as string];
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
 * What a part of a key may not hold as it is: the separator `:`, the escape `%`, `#` (a field key must never
 * read as the body digest's `#…`), NUL (PostgreSQL's text refuses it) and any UTF-16 surrogate (a lone one is
 * written as U+FFFD by every store that keeps UTF-8, so two ids would meet there; paired ones are let through
 * by `keyPart`). One test lets the usual ids, plain ASCII, through without a replace.
 */
const SPECIAL = /[%:#\0\uD800-\uDFFF]/;
const ESCAPED = /[%:#\0]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES: Readonly<Record<string, string>> = { '%': '%25', ':': '%3A', '#': '%23', '\0': '%00' };
const escapeOf = (c: string): string => ESCAPES[c] ?? `%u${c.charCodeAt(0).toString(16).toUpperCase()}`;

/**
 * One part of a key as it is written: `%`, `:`, `#` and NUL as `%25`, `%3A`, `%23`, `%00`, a lone surrogate as
 * `%uD800`. Every `%` written starts one of these and none is the start of another, so the parts read back
 * exactly: keys of different part tuples never meet (issue 33).
 */
export function keyPart(text: string): string {
  return (text.length <= SCANNED_LENGTH ? hasSpecial(text) : SPECIAL.test(text)) ? text.replace(ESCAPED, escapeOf) : text;
}

/** Up to this length a part is scanned in JS: a message id's regexp test cost ~450 cycles a request, the scan ~100. */
const SCANNED_LENGTH = 32;

/** `SPECIAL.test(text)`, one character at a time. */
function hasSpecial(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x25 || code === 0x3a || code === 0x23 || code === 0 || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

/**
 * `<appId>:<webhook id>:<trigger>:`, the start of every key, so keys of two apps, webhooks or triggers never
 * meet: webhook ids are chosen by each customer and message ids are unique only within an app. All three places
 * are always written, a missing `appId` or webhook id as an empty place (`:wh:message_sent:`): left out, the
 * short form read as another app's long one (webhook `acme:wh` or `X` against app `acme` or `X`, issue 33).
 */
export function keyPrefix(event: ParsedWebhook): string {
  const webhook = typeof event.webhook === 'string' ? event.webhook : undefined;
  const app = appIdOf(event);
  const { trigger } = event;
  // A receiver hears one app, webhook and trigger over and over: three string comparisons give the prefix it
  // built last, where escaping each part (a regexp test apiece) and joining them cost about 1 500 instructions.
  const last = lastPrefix;
  if (last !== undefined && app === last.app && webhook === last.webhook && trigger === last.trigger) return last.prefix;
  const prefix = `${app === undefined ? '' : keyPart(app)}:${webhook === undefined ? '' : keyPart(webhook)}:${keyPart(trigger)}:`;
  // Long parts are not kept: a sender must not make every later key compare kilobytes.
  if ((app?.length ?? 0) + (webhook?.length ?? 0) + trigger.length <= MAX_REMEMBERED_PARTS) lastPrefix = { app, webhook, trigger, prefix };
  return prefix;
}

const MAX_REMEMBERED_PARTS = 256;
let lastPrefix: { app: string | undefined; webhook: string | undefined; trigger: string; prefix: string } | undefined;

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
    key += i === 0 ? keyPart(value) : `:${keyPart(value)}`;
  }
  return key;
}
