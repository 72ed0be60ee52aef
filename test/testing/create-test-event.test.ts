/**
 * createTestEvent: a fresh event each call where it matters, so that a test suite run twice against a durable
 * inbox (or one test making two events) is not taken for one repeated delivery.
 */
import { describe, expect, it } from 'vitest';
import { createWebhooks, idempotencyKey, memoryInbox, triggers } from '../../src/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';

/** Triggers whose events hold none of the ids createTestEvent renews (keyed by their body's digest). */
const SAME_EACH_CALL = new Set(triggers.filter((trigger) => /^(group_|user_(blocked|unblocked|connection))/.test(trigger)));

describe('createTestEvent ids', () => {
  it('a fresh message id each call, numeric like the service’s', () => {
    const first = createTestEvent('message_sent');
    const second = createTestEvent('message_sent');
    expect(first.data.message.id).toMatch(/^\d+$/);
    expect(second.data.message.id).not.toBe(first.data.message.id);
    expect(idempotencyKey(second, JSON.stringify(second))).not.toBe(idempotencyKey(first, JSON.stringify(first)));
  });

  it('keeps the id an override sets', () => {
    const event = createTestEvent('message_sent', { data: { message: { id: '42' } } });
    expect(event.data.message.id).toBe('42');
    expect(createTestEvent('message_sent', { data: { message: { id: '42' } } }).data.message.id).toBe('42');
  });

  it.each(triggers.filter((trigger) => !SAME_EACH_CALL.has(trigger)).map((trigger) => [trigger]))(
    '%s: two calls make two keys',
    (trigger) => {
      const [a, b] = [createTestEvent(trigger), createTestEvent(trigger)];
      expect(idempotencyKey(a, JSON.stringify(a))).not.toBe(idempotencyKey(b, JSON.stringify(b)));
    },
  );

  it('changes only those ids: everything else is the fixture, overrides merged', () => {
    const [a, b] = [createTestEvent('call_started'), createTestEvent('call_started')];
    expect(a.data.sessionId).not.toBe(b.data.sessionId);
    expect({ ...a, data: { ...a.data, sessionId: '' } }).toEqual({ ...b, data: { ...b.data, sessionId: '' } });
    const text = createTestEvent('message_sent', { data: { message: { data: { text: 'hello' } } } });
    expect(text.data.message.data.text).toBe('hello');
    expect(text.data.message.sender).toBe('superhero1');
  });

  it('two events of one test reach a handler twice through a receiver that dedupes', async () => {
    const webhooks = createWebhooks({ auth: false, inbox: memoryInbox() });
    const seen: string[] = [];
    webhooks.on('message_sent', (event) => {
      seen.push(event.data.message.id);
    });
    for (let i = 0; i < 2; i++) {
      const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
      expect(response.status).toBe(200);
      await response.done;
    }
    expect(new Set(seen).size).toBe(2);
    await webhooks.close();
  });
});
