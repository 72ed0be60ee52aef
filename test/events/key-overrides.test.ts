/**
 * The receiver's key functions with `idempotencyKeys` overrides, on their own: an override is looked up among
 * the option's own entries only (a trigger named like an Object method is not keyed by that method), and one
 * that throws or gives nothing usable leaves the event to its body, never merging distinct events.
 */
import { describe, expect, it } from 'vitest';
import type { ParsedWebhook } from '../../src/index.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { keyFunctions } from '../../src/receive/idempotency.js';

const event = (trigger: string, data: unknown = {}) => ({ appId: 'a', webhook: 'w', trigger, data }) as ParsedWebhook;
const digestKey = (trigger: string, body: string) => `a:w:${trigger}:#${sha256Base64(body)}`;

describe('keyFunctions with overrides', () => {
  it("a trigger named like an Object method has no override unless the option names it: the body keys it", () => {
    const { keyOf, fieldKeyOf } = keyFunctions({ message_sent: () => 'mine' });
    for (const trigger of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
      expect(fieldKeyOf(event(trigger)), trigger).toBeUndefined();
      expect(keyOf(event(trigger), '{"n":1}'), trigger).toBe(digestKey(trigger, '{"n":1}'));
      expect(keyOf(event(trigger), '{"n":2}'), trigger).toBe(digestKey(trigger, '{"n":2}'));
    }
  });

  it('a trigger without an override keeps its documented key', () => {
    const { keyOf } = keyFunctions({ message_sent: () => 'mine' });
    expect(keyOf(event('call_initiated', { call: { id: 'c1', sentAt: 5 } }), '{}')).toBe('a:w:call_initiated:c1:5');
  });

  it('an override that throws, or gives an empty string or no string, leaves the event to its body', () => {
    const broken = (): string => {
      throw new Error('key function broke');
    };
    const { keyOf, fieldKeyOf } = keyFunctions({
      message_sent: broken,
      call_started: () => '',
      poll_voted: () => 7 as unknown as string,
    });
    for (const trigger of ['message_sent', 'call_started', 'poll_voted']) {
      const one = event(trigger, { message: { id: 'm1' }, sessionId: 's', created_at: 1 });
      expect(fieldKeyOf(one), trigger).toBeUndefined();
      expect(keyOf(one, '{"n":1}'), trigger).toBe(digestKey(trigger, '{"n":1}'));
    }
  });

  it('an override is one escaped part after the three places', () => {
    const { keyOf } = keyFunctions({ message_sent: (e) => `conv:${(e.data as unknown as { c: string }).c}` });
    expect(keyOf(event('message_sent', { c: '%1' }), '{}')).toBe('a:w:message_sent:conv%3A%251');
  });

  it('an empty set of overrides is the documented keys', () => {
    const { keyOf } = keyFunctions({});
    expect(keyOf(event('message_sent', { message: { id: 'm1' } }), '{}')).toBe('a:w:message_sent:m1');
    expect(keyOf(event('group_created'), '{}')).toBe(digestKey('group_created', '{}'));
  });
});
