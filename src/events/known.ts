/** Telling known triggers from the ones this version has not heard of yet. */
import type { Trigger } from './registry.js';
import { triggers } from './generated/validators.js';
import type { ParsedWebhook, WebhookEvent } from './types.js';

const known = new Set<string>(triggers);

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
