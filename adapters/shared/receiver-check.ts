/**
 * The check every adapter makes of the receiver it is given, at the call: without it, a missing or misplaced
 * receiver (`nodeMiddleware({ path })`, the options in its place) passed unnoticed and the first request
 * failed with `webhooks.respond is not a function`, far from the line at fault.
 */
import { ConfigurationError } from '../../src/dispatch/index.js';

/** What a value given as the receiver was, for the message: the options, say, or nothing. */
function described(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  const keys = Object.keys(value).slice(0, 4);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.join(', ')} (options in the receiver's place?)`;
}

/**
 * Throws a `ConfigurationError` (option `webhooks`) unless `webhooks` has the receiver's `methods`; `usage` is
 * the call as it should be written, so the message says what to pass.
 */
export function requireReceiver(adapter: string, usage: string, webhooks: unknown, methods: readonly string[] = ['respond', 'handle']): void {
  const receiver = webhooks as Record<string, unknown> | null | undefined;
  if (receiver !== null && typeof receiver === 'object' && methods.every((method) => typeof receiver[method] === 'function')) return;
  throw new ConfigurationError(
    'webhooks',
    `${adapter} needs the receiver made by createWebhooks({ auth: … }): ${usage}. It got ${described(webhooks)}.`,
  );
}
