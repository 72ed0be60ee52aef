/**
 * Handlers and onError handlers may throw or reject with anything, including values `String()` cannot
 * convert. Each failure must still reach onError (or the logger), the remaining handlers must still run,
 * and nothing may escape as an unhandled rejection.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebhooks, type ParsedWebhook, type WebhookError } from '../../src/index.js';

const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const request = { method: 'POST', headers: { 'content-type': 'application/json' }, body };

const unprintable: Array<[string, (event: ParsedWebhook) => unknown]> = [
  ['Object.create(null)', () => Object.create(null)],
  [
    'an object whose toString throws',
    () => ({
      toString() {
        throw new Error('no');
      },
    }),
  ],
  ['part of the event carrying a "toString" key', (event) => (event.data as Record<string, unknown>).carrier],
  ['a Symbol', () => Symbol('s')],
  [
    'an Error whose message getter throws',
    () =>
      Object.defineProperty(new Error(), 'message', {
        get() {
          throw new Error('no');
        },
      }),
  ],
];

const withCarrier = (() => {
  const event = JSON.parse(body);
  event.data.carrier = { toString: 'not a function' };
  return JSON.stringify(event);
})();

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => void process.off('unhandledRejection', onUnhandled));

describe('a handler failing with a value String() cannot convert', () => {
  for (const [name, value] of unprintable) {
    for (const how of ['throws', 'rejects'] as const) {
      it(`${how} ${name}: onError hears of it, later handlers still run, nothing unhandled`, async () => {
        const webhooks = createWebhooks({ auth: false, logger: {} });
        const errors: WebhookError[] = [];
        let later = 0;
        webhooks.on('message_sent', (event) => {
          const failure = value(event);
          if (how === 'throws') throw failure;
          return Promise.reject(failure);
        });
        webhooks.on('message_sent', () => void later++);
        webhooks.onError((error) => void errors.push(error));
        const response = await webhooks.handle({ ...request, body: withCarrier });
        expect(response.status).toBe(200);
        await response.done;
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(later).toBe(1);
        expect(errors.map((error) => error.code)).toEqual(['handler_failed']);
        expect(typeof errors[0]?.message).toBe('string');
        expect(unhandled).toEqual([]);
      });
    }
  }

  it('an onError handler rejecting with Object.create(null) is logged, not left unhandled', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const webhooks = createWebhooks({ auth: false, logger: { error: (fields) => void logged.push(fields) } });
    webhooks.on('message_sent', () => {
      throw new Error('handler');
    });
    webhooks.onError(() => Promise.reject(Object.create(null)));
    const response = await webhooks.handle(request);
    await response.done;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(logged).toHaveLength(1);
    expect(typeof logged[0]?.reason).toBe('string');
    expect(unhandled).toEqual([]);
  });

  it('close() still drains: the failing job ends', async () => {
    const webhooks = createWebhooks({ auth: false, logger: {} });
    webhooks.on('message_sent', () => Promise.reject(Object.create(null)));
    webhooks.onError(() => undefined);
    await webhooks.handle(request);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await webhooks.close({ timeoutMs: 200 })).toEqual({ drained: 0, abandoned: 0 });
  });
});
