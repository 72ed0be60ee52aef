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
 * A realistic, valid event of the trigger (the fixture of `fixtures/<trigger>.json`), deep-merged with
 * `overrides`. Throws a `WebhookError` when the overrides make it invalid, so a test never feeds a handler
 * an event the receiver would have refused.
 */
export function createTestEvent<T extends Trigger>(trigger: T, overrides?: DeepPartial<EventOf<T>>): EventOf<T> {
  if (!isKnownTrigger(trigger)) throw unknownTrigger(trigger);
  const event = merge(structuredClone(samples[trigger]), overrides);
  return parseWebhook(event as object) as EventOf<T>;
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

/** The `Authorization` header value for Basic credentials (UTF-8). */
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

/** A normalized request carrying the event as the platform sends it, for `webhooks.handle()`. */
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
