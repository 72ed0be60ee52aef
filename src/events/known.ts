/** Telling known triggers from the ones this version has not heard of yet. */
import type { Trigger } from './registry.js';
import { triggers } from './generated/validators.js';
import type { ParsedWebhook, WebhookEvent } from './types.js';

const known = new Set<string>(triggers);
const canonical = new Map<string, Trigger>(triggers.map((trigger) => [trigger, trigger]));

/**
 * The library's own string for a known trigger id, or undefined for an unknown one. A trigger parsed from a
 * body is a new string each time, which every Map or Set lookup by it hashes and compares character by
 * character; the library's string is interned, so lookups by it compare by identity.
 */
export function knownTrigger(trigger: string): Trigger | undefined {
  return canonical.get(trigger);
}

/**
 * Whether a trigger id, or a parsed event's trigger, is one this version of the library knows.
 *
 * @example
 * ```ts
 * import { isKnownTrigger } from 'chat-webhooks';
 *
 * isKnownTrigger('message_sent'); // true
 * isKnownTrigger('poll_closed'); // false: such events reach onUnknown
 * ```
 */
export function isKnownTrigger(trigger: string): trigger is Trigger;
export function isKnownTrigger(event: ParsedWebhook): event is WebhookEvent;
export function isKnownTrigger(value: string | ParsedWebhook): boolean {
  return known.has(typeof value === 'string' ? value : value.trigger);
}
