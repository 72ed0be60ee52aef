/**
 * A listed message back into the envelope its webhook carried. The list returns the very message objects the
 * webhooks put in `data` (an edit or a delete is its own action message), so the envelope is the message
 * under the trigger's one field, with the envelope parts the caller names: nothing is invented. What cannot be
 * rebuilt that faithfully is a kind the report counts.
 */
import type { ApiMessage } from '../api/index.js';

/** The envelope parts the platform would have sent: part of every key. */
export interface EnvelopeParts {
  appId: string;
  region: string;
  webhook: string;
}

export interface Rebuilt {
  trigger: string;
  /** The body, as the platform would have sent it. */
  body: string;
}

/** The rebuilt envelope, or the kind of message it could not be rebuilt from (`call:ended`, `action:groupMember:joined`). */
export function rebuild(message: ApiMessage, parts: EnvelopeParts): Rebuilt | { kind: string } {
  const found = triggerOf(message);
  if (typeof found !== 'string') return found;
  const field = found === 'call_initiated' ? 'call' : 'message';
  // Spec 6.1: `type` only for call and meeting events.
  const envelope =
    found === 'call_initiated'
      ? { trigger: found, type: 'call', data: { [field]: message }, ...parts }
      : { trigger: found, data: { [field]: message }, ...parts };
  return { trigger: found, body: JSON.stringify(envelope) };
}

function triggerOf(message: ApiMessage): string | { kind: string } {
  const { category, type } = message;
  const content = message.data as { action?: unknown; entities?: { on?: { entity?: unknown } } } | undefined;
  const action = typeof content?.action === 'string' ? content.action : undefined;
  // Spec 6.3: message_sent carries a message of category `message` (the live service: `custom` too).
  if (category === 'message' || category === 'custom') return 'message_sent';
  if (category === 'action' && type === 'message' && isObject(content?.entities?.on?.entity)) {
    if (action === 'edited') return 'message_edited';
    if (action === 'deleted') return 'message_deleted';
  }
  // call_initiated carries the call message itself; later states of a call have payloads the list does not hold.
  if (category === 'call' && action === 'initiated') return 'call_initiated';
  const kind = [category, category === 'action' || category === 'call' ? type : undefined, action].filter((part) => typeof part === 'string');
  return { kind: kind.length === 0 ? 'unknown' : kind.join(':') };
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}
