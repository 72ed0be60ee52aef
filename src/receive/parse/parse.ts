import { decodeUtf8 } from '#platform';
import { WebhookError } from '../../dispatch/errors.js';
import type { ParsedWebhook } from '../../events/index.js';
import { knownTrigger } from '../../events/index.js';
import { loadExplainer } from './explainer.js';
import { envelopeProblem, eventIssues, UNEXPLAINED } from './validate.js';

/** A delivery's body: the raw text, its UTF-8 bytes, or the value a body parser already made of it. */
export type WebhookBody = string | Uint8Array | ArrayBuffer | object;

export type SafeParseResult =
  | { success: true; event: ParsedWebhook; error?: undefined }
  | { success: false; error: WebhookError; event?: undefined };

/** Everything parsing learned about a delivery, for the receiver. */
export interface Delivery {
  /** The body as text: bytes decoded as UTF-8, a pre-parsed body serialized again. */
  rawBody: string;
  /** The body was pre-parsed and could not be serialized again (too deep, say): it has no stable text. */
  unserializable?: true;
  /** The body's bytes, when it arrived as bytes. */
  bytes?: Uint8Array;
  /** Set when the body is a valid envelope, even if its payload failed validation. */
  event?: ParsedWebhook;
  known: boolean;
  error?: WebhookError;
  /** The payload is invalid and its issues are not known yet: zod's side is loading (explainer.ts). */
  unexplained?: true;
}

/** Parses and validates a delivery in two steps: the envelope, then the event against its trigger's schema. */
export function inspectDelivery(body: WebhookBody): Delivery {
  let rawBody: string;
  let value: unknown;
  let bytes: Uint8Array | undefined;
  const text = typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer;
  if (text) {
    if (typeof body === 'string') {
      rawBody = body;
    } else {
      bytes = body instanceof Uint8Array ? body : new Uint8Array(body);
      rawBody = decodeUtf8(bytes);
    }
    try {
      // Some senders prefix a byte order mark; JSON.parse would reject it.
      value = JSON.parse(rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody);
    } catch (cause) {
      const reason = rawBody.length === 0 ? 'the body is empty' : (cause as Error).message;
      return { rawBody, known: false, error: invalid('invalid_json', `The body is not valid JSON: ${reason}.`, rawBody) };
    }
  } else {
    value = body;
    const serialized = serialize(body);
    if (serialized === undefined) return { ...inspectValue(value, String(value)), unserializable: true };
    rawBody = serialized;
  }
  const delivery = inspectValue(value, rawBody, text);
  if (bytes) delivery.bytes = bytes;
  return delivery;
}

/** `parsedHere`: the value is this parse's own, not the caller's object (which is never written to). */
function inspectValue(value: unknown, rawBody: string, parsedHere = false): Delivery {
  const problem = envelopeProblem(value);
  if (problem) {
    return {
      rawBody,
      known: false,
      error: invalid('invalid_envelope', `The body is not a webhook envelope: ${problem}.`, rawBody),
    };
  }
  const event = value as ParsedWebhook;
  const trigger = knownTrigger(event.trigger);
  const known = trigger !== undefined;
  // The same text, as the library's interned string: the lookups by trigger that follow compare by identity.
  if (known && parsedHere) (event as { trigger: string }).trigger = trigger;
  const issues = known ? eventIssues(event) : undefined;
  if (!issues) return { rawBody, event, known };
  if (issues === UNEXPLAINED) {
    const message = `The ${event.trigger} payload does not match its schema (its issues are told once zod has loaded, from the next one on).`;
    return { rawBody, event, known, unexplained: true, error: new WebhookError('invalid_payload', message, { issues: [], rawBody, event }) };
  }
  const where = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  const error = new WebhookError(
    'invalid_payload',
    `The ${event.trigger} payload does not match its schema (${where}).`,
    { issues, rawBody, event },
  );
  return { rawBody, event, known, error };
}

function invalid(code: 'invalid_json' | 'invalid_envelope', message: string, rawBody: string) {
  return new WebhookError(code, message, { rawBody });
}

/** Text of a value a body parser produced, or undefined when it has none (a cycle, too deep). */
function serialize(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return undefined;
  }
}

/**
 * For the synchronous functions: where zod's side cannot load synchronously (a web runtime, a bundle) the first
 * rejection has no issues; it starts the loading, so that the next ones do (chat-webhooks/schemas loads it too).
 */
function inspectSync(body: WebhookBody): Delivery {
  const delivery = inspectDelivery(body);
  if (delivery.unexplained) loadExplainer().catch(() => undefined);
  return delivery;
}

/**
 * Parses a delivery: the body as text, UTF-8 bytes or an already-parsed object. Returns the caller's own
 * object, every unknown field kept. An unknown trigger is not an error: it yields an `UnknownWebhookEvent`.
 * A failure is a `WebhookError` (`invalid_json`, `invalid_envelope`, `invalid_payload`) carrying the raw
 * body and, for payload errors, zod's issues with their paths and the envelope.
 *
 * @example
 * ```ts
 * import { safeParseWebhook } from 'chat-webhooks';
 *
 * const result = safeParseWebhook(rawBody);
 * if (result.success) console.log(result.event.trigger);
 * else console.error(result.error.code, result.error.issues);
 * ```
 */
export function safeParseWebhook(body: WebhookBody): SafeParseResult {
  const { event, error } = inspectSync(body);
  return error ? { success: false, error } : { success: true, event: event as ParsedWebhook };
}

/** `safeParseWebhook` for callers that can wait (a queue consumer): a rejection's issues are always told. */
export async function safeParseExplained(body: WebhookBody): Promise<SafeParseResult> {
  let delivery = inspectDelivery(body);
  if (delivery.unexplained) {
    await loadExplainer();
    delivery = inspectDelivery(body);
  }
  const { event, error } = delivery;
  return error ? { success: false, error } : { success: true, event: event as ParsedWebhook };
}

/**
 * Like `safeParseWebhook`, but throws the `WebhookError`.
 *
 * @example
 * ```ts
 * import { parseWebhook } from 'chat-webhooks';
 *
 * // An SQS consumer, say: the event a queue holds, validated as the receiver would.
 * const event = parseWebhook(record.body);
 * if (event.trigger === 'message_sent') console.log(event.data.message.id);
 * ```
 */
export function parseWebhook(body: WebhookBody): ParsedWebhook {
  const { event, error } = inspectSync(body);
  if (error) throw error;
  return event as ParsedWebhook;
}
