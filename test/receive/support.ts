/** What several receive suites share: credentials, fixtures, a pause, and a receiver that records onError. */
import { readFileSync } from 'node:fs';
import { createWebhooks, type WebhookError, type WebhooksOptions } from '../../src/index.js';

export const auth = { username: 'platform', password: 's3cret' };

export const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver with `auth`, a silent logger and the given options; `errors` collects what onError got. */
export function receiver(options: Partial<WebhooksOptions> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  const errors: WebhookError[] = [];
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, errors };
}

/**
 * The message_sent fixture as a different event: another message id (the event's idempotency key), the
 * rest of the body unchanged. A body that differs only in its bytes is the same event, a repeat.
 */
export function messageSent(id: number | string): string {
  const event = JSON.parse(fixture('message_sent')) as { data: { message: { id: unknown } } };
  event.data.message.id = String(id);
  return JSON.stringify(event);
}
