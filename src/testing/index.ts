/**
 * Helpers for testing an application's handlers: realistic events and ready-made requests.
 * `import { createTestEvent, buildRequest } from 'chat-webhooks/testing'`.
 */
import {
  ConfigurationError,
  createWebhooks,
  isKnownTrigger,
  parseWebhook,
  type EventOf,
  type Trigger,
  type WebhookRequest,
} from '../index.js';
// Tests are no cold start: zod's side is loaded, so that an override that breaks the schema is explained at once.
import '../receive/schemas.js';
import { samples } from './generated/samples.js';

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function merge(base: unknown, overrides: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(overrides)) return overrides === undefined ? base : overrides;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) result[key] = merge(base[key], value);
  return result;
}

/**
 * The ids that make an event itself (and so its idempotency key): the message, call, reaction or moderated
 * resource it is about (a receipt's message), its call session, its transcription. Paths into `data`.
 */
const OWN_IDS: readonly (readonly string[])[] = [
  ['message', 'id'],
  ['body', 'messageId'],
  ['call', 'id'],
  ['reaction', 'id'],
  ['resource', 'id'],
  ['sessionId'],
  ['tid'],
];
/** Where another copy of an id sits (a call's session in its entities): each gets the same fresh value. */
const ID_NAMES = new Set(['id', 'messageId', 'sessionId', 'sessionid', 'tid']);

/** Numeric ids count up from the load time in microseconds: unique across test runs, numeric like the service's. */
let nextNumericId = Date.now() * 1000;
let nextSuffix = 0;
const runSuffix = Date.now().toString(36);

function valueAt(node: unknown, path: readonly string[]): unknown {
  let value = node;
  for (const step of path) value = isPlainObject(value) ? value[step] : undefined;
  return value;
}

function freshId(value: string): string {
  return /^\d+$/.test(value) ? String(nextNumericId++) : `${value}-${runSuffix}${(nextSuffix++).toString(36)}`;
}

/** Gives the event's own ids fresh values (the same one wherever an id repeats), except those `overrides` set. */
function freshenIds(event: Record<string, unknown>, overrides: unknown): void {
  const renamed = new Map<string, string>();
  for (const path of OWN_IDS) {
    const value = valueAt(event.data, path);
    if (typeof value !== 'string' || valueAt(valueAt(overrides, ['data']), path) !== undefined) continue;
    if (!renamed.has(value)) renamed.set(value, freshId(value));
  }
  const visit = (node: unknown, overridden: unknown): void => {
    if (!isPlainObject(node) && !Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const given = isPlainObject(overridden) ? overridden[key] : undefined;
      const fresh = typeof value === 'string' && ID_NAMES.has(key) && given === undefined ? renamed.get(value) : undefined;
      if (fresh !== undefined) (node as Record<string, unknown>)[key] = fresh;
      else visit(value, given);
    }
  };
  visit(event, overrides);
}

/**
 * A realistic, valid event of the trigger (the fixture of `fixtures/<trigger>.json`), deep-merged with
 * `overrides`. Throws a `WebhookError` when the overrides make it invalid, so a test never feeds a handler
 * an event the receiver would have refused.
 *
 * Each call gives the event fresh ids where they make its idempotency key (the message, call, reaction or
 * moderated resource id, a receipt's message id, the call session, the transcription id), so two events, or two test runs against a
 * durable inbox, are never taken for one delivery; an id the overrides set is kept. Events of triggers keyed
 * by their body's digest and holding none of those ids (group and user events) are the same each call: set a
 * field to tell two apart.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { buildRequest, createTestEvent } from 'chat-webhooks/testing';
 *
 * const webhooks = createWebhooks({ auth: false });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.data.text));
 * const event = createTestEvent('message_sent', { data: { message: { data: { text: 'hello' } } } });
 * await webhooks.handle(buildRequest(event));
 * ```
 */
export function createTestEvent<T extends Trigger>(trigger: T, overrides?: DeepPartial<EventOf<T>>): EventOf<T> {
  if (!isKnownTrigger(trigger)) throw unknownTrigger(trigger);
  const event = merge(structuredClone(samples[trigger]), overrides) as Record<string, unknown>;
  freshenIds(event, overrides);
  return parseWebhook(event) as EventOf<T>;
}

/**
 * The receiver's own error for a trigger it does not know, which names the closest known ones; asked of a
 * throwaway receiver because this module uses the public API only, as a user's code would.
 */
function unknownTrigger(trigger: string): ConfigurationError {
  try {
    createWebhooks({ auth: false, dedupe: false }).on(trigger as Trigger, () => {});
  } catch (error) {
    if (error instanceof ConfigurationError) return new ConfigurationError('trigger', `createTestEvent(${JSON.stringify(trigger)}): ${error.message}`);
  }
  return new ConfigurationError('trigger', `createTestEvent(${JSON.stringify(trigger)}): unknown trigger.`);
}

/**
 * The `Authorization` header value for Basic credentials (UTF-8).
 *
 * @example
 * ```ts
 * import { basicAuthHeader } from 'chat-webhooks/testing';
 *
 * await fetch('http://localhost:3000/webhooks', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json', authorization: basicAuthHeader('app', 's3cret') },
 *   body: JSON.stringify(event),
 * });
 * ```
 */
export function basicAuthHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export interface BuildRequestOptions {
  /** Basic credentials to send. */
  auth?: { username: string; password: string };
  /** Extra or replacing headers (lower-case names). */
  headers?: Record<string, string>;
  method?: string;
}

/**
 * A normalized request carrying the event as the platform sends it, for `webhooks.handle()`.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { buildRequest, createTestEvent } from 'chat-webhooks/testing';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: 's3cret' } });
 * const response = await webhooks.handle(buildRequest(createTestEvent('message_sent'), { auth: { username: 'app', password: 's3cret' } }));
 * console.log(response.status); // 200
 * ```
 */
export function buildRequest(event: object | string, options: BuildRequestOptions = {}): WebhookRequest {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...(options.auth ? { authorization: basicAuthHeader(options.auth.username, options.auth.password) } : {}),
    ...options.headers,
  };
  return { method: options.method ?? 'POST', headers, body };
}
