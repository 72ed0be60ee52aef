/**
 * The envelope check and the messages of parse failures (src/receive/parse/validate.ts, src/receive/parse/parse.ts):
 * each reason a body is not an envelope, the trigger length boundary, the empty body, the byte order mark,
 * pre-parsed bodies without stable text, and what an invalid payload's message names (found by mutation
 * testing, tools/mutation/results.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWebhook, safeParseWebhook } from '../../src/index.js';
import { inspectDelivery } from '../../src/receive/parse/parse.js';
import { envelopeProblem, eventIssues, MAX_TRIGGER_LENGTH } from '../../src/receive/parse/validate.js';
import { createTestEvent } from '../../src/testing/index.js';
// zod's side, loaded as chat-webhooks/schemas loads it: synchronous explanations from the first rejection on.
import '../../src/receive/schemas.js';

describe('envelopeProblem', () => {
  it('says why a value is not an envelope', () => {
    const notObject = 'the body must be a JSON object with `trigger` and `data`';
    expect(envelopeProblem(null)).toBe(notObject);
    expect(envelopeProblem([])).toBe(notObject);
    expect(envelopeProblem('text')).toBe(notObject);
    expect(envelopeProblem(7)).toBe(notObject);
    expect(envelopeProblem({ data: {} })).toBe('`trigger` must be a string');
    expect(envelopeProblem({ trigger: 5, data: {} })).toBe('`trigger` must be a string');
    expect(envelopeProblem({ trigger: 'x' })).toBe('`data` must be an object');
    expect(envelopeProblem({ trigger: 'x', data: null })).toBe('`data` must be an object');
    expect(envelopeProblem({ trigger: 'x', data: [] })).toBe('`data` must be an object');
    expect(envelopeProblem({ trigger: 'x', data: 'text' })).toBe('`data` must be an object');
    expect(envelopeProblem({ trigger: 'x', data: {} })).toBeUndefined();
  });

  it('takes a trigger of 1 to 128 characters', () => {
    const tooLong = `\`trigger\` must be 1 to ${MAX_TRIGGER_LENGTH} characters long`;
    expect(MAX_TRIGGER_LENGTH).toBe(128);
    expect(envelopeProblem({ trigger: '', data: {} })).toBe(tooLong);
    expect(envelopeProblem({ trigger: 'x', data: {} })).toBeUndefined();
    expect(envelopeProblem({ trigger: 'x'.repeat(128), data: {} })).toBeUndefined();
    expect(envelopeProblem({ trigger: 'x'.repeat(129), data: {} })).toBe(tooLong);
  });
});

describe('eventIssues', () => {
  it('none for a valid known event or an unknown trigger; issues with paths for an invalid one', () => {
    expect(eventIssues(createTestEvent('message_sent'))).toBeUndefined();
    expect(eventIssues({ trigger: 'poll_voted' })).toBeUndefined();
    const issues = eventIssues({ ...createTestEvent('message_sent'), data: {} } as never);
    expect(Array.isArray(issues) && issues.length).toBeGreaterThan(0);
    expect(Array.isArray(issues) && issues[0]?.path[0]).toBe('data');
  });
});

describe('the envelope type', () => {
  const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8')) as object;

  it('is checked on call and meeting events (a string), and kept unchecked elsewhere', () => {
    const call = { ...fixture('call_started'), type: 5 };
    const result = safeParseWebhook(JSON.stringify(call));
    expect(result.error?.code).toBe('invalid_payload');
    expect(result.error?.issues?.map((issue) => issue.path)).toEqual([['type']]);
    expect(safeParseWebhook(JSON.stringify({ ...fixture('call_started'), type: 'a-new-kind' })).success).toBe(true);
    const message = safeParseWebhook(JSON.stringify({ ...fixture('message_sent'), type: 5 }));
    expect(message.success).toBe(true);
    expect((message.event as { type?: unknown }).type).toBe(5);
  });
});

describe('parse failures', () => {
  it('an empty body says so', () => {
    expect(safeParseWebhook('').error?.message).toBe('The body is not valid JSON: the body is empty.');
    expect(safeParseWebhook(new Uint8Array()).error?.message).toBe('The body is not valid JSON: the body is empty.');
  });

  it('other JSON errors carry the parser message and the raw body', () => {
    const result = safeParseWebhook('{"trigger":');
    expect(result.error?.code).toBe('invalid_json');
    expect(result.error?.message).toMatch(/^The body is not valid JSON: .+\.$/);
    expect(result.error?.message).not.toContain('the body is empty');
    expect(result.error?.rawBody).toBe('{"trigger":');
  });

  it('an envelope problem is named in the message, with the raw body', () => {
    const result = safeParseWebhook('[1]');
    expect(result.error).toMatchObject({
      code: 'invalid_envelope',
      message: 'The body is not a webhook envelope: the body must be a JSON object with `trigger` and `data`.',
      rawBody: '[1]',
    });
  });

  it('an invalid payload with five issues names the first three in its message, separated by "; "', () => {
    const event = createTestEvent('message_sent');
    const message = { ...event.data.message, id: {}, conversationId: {}, type: {}, sender: 5, receiver: 5 };
    const error = safeParseWebhook(JSON.stringify({ ...event, data: { ...event.data, message } })).error!;
    expect(error.issues).toHaveLength(5);
    expect(error.message).toBe(
      'The message_sent payload does not match its schema (' +
        'data.message.id: Invalid input: expected string, received object; ' +
        'data.message.conversationId: Invalid input: expected string, received object; ' +
        'data.message.sender: Invalid input: expected string, received number).',
    );
  });

  it('an invalid payload names the trigger and at most three issues, with paths or (root)', () => {
    const event = { ...createTestEvent('message_sent'), data: {} };
    const result = safeParseWebhook(JSON.stringify(event));
    const error = result.error!;
    expect(error.code).toBe('invalid_payload');
    expect(error.message).toMatch(/^The message_sent payload does not match its schema \(data\.[^;]+(; data\.[^;]+){0,2}\)\.$/);
    expect(error.message.split('; ')).toHaveLength(Math.min(3, error.issues!.length));
    expect(error.event).toMatchObject({ trigger: 'message_sent' });
    expect(error.rawBody).toBe(JSON.stringify(event));
  });

  it('parseWebhook returns the event itself when valid', () => {
    const text = JSON.stringify(createTestEvent('message_sent'));
    expect(parseWebhook(text)).toEqual(JSON.parse(text));
  });
});

describe('inspectDelivery', () => {
  it('a byte order mark is skipped in text and bytes; the raw body keeps it', () => {
    const text = `\uFEFF${JSON.stringify({ trigger: 'poll_voted', data: {} })}`;
    const fromText = inspectDelivery(text);
    expect(fromText.error).toBeUndefined();
    expect(fromText.rawBody).toBe(text);
    const bytes = new TextEncoder().encode(text);
    const fromBytes = inspectDelivery(bytes);
    expect(fromBytes.error).toBeUndefined();
    expect(fromBytes.bytes).toBe(bytes);
  });

  it('a character that only looks like a mark is not skipped', () => {
    expect(inspectDelivery(`\uFFFE${JSON.stringify({ trigger: 'x', data: {} })}`).error?.code).toBe('invalid_json');
  });

  it('an ArrayBuffer is read as its bytes', () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ trigger: 'poll_voted', data: { a: 1 } }));
    const delivery = inspectDelivery(bytes.slice().buffer);
    expect(delivery.event).toMatchObject({ trigger: 'poll_voted', data: { a: 1 } });
    expect(delivery.bytes).toEqual(bytes);
    expect(delivery.known).toBe(false);
  });

  it('a string body has no bytes; a known trigger is marked known', () => {
    const delivery = inspectDelivery(JSON.stringify(createTestEvent('message_sent')));
    expect(delivery.bytes).toBeUndefined();
    expect(delivery.known).toBe(true);
  });

  it('a pre-parsed body is serialized again; one with a cycle is unserializable but still dispatched', () => {
    const plain = { trigger: 'poll_voted', data: { a: 1 } };
    expect(inspectDelivery(plain)).toMatchObject({ rawBody: JSON.stringify(plain), event: plain });
    const cyclic: Record<string, unknown> = { trigger: 'poll_voted', data: {} };
    (cyclic.data as Record<string, unknown>).self = cyclic;
    const delivery = inspectDelivery(cyclic);
    expect(delivery.unserializable).toBe(true);
    expect(delivery.event).toBe(cyclic);
    expect(delivery.rawBody).toBe('[object Object]');
    expect(inspectDelivery(plain).unserializable).toBeUndefined();
  });
});
