import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isKnownTrigger, parseWebhook, safeParseWebhook, triggers, WebhookError } from '../../src/index.js';
import { registry } from '../../src/receive/schemas.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const event = (name: string) => JSON.parse(fixture(name));

describe('registry', () => {
  it('knows the 31 triggers of the spec table, user_mentioned, and 13 observed beyond the spec', () => {
    const spec = triggers.filter((trigger) => !('beyondSpec' in registry[trigger]));
    const beyond = triggers.filter((trigger) => 'beyondSpec' in registry[trigger]);
    expect(spec).toHaveLength(32);
    expect(spec).toContain('user_mentioned');
    expect(beyond.sort()).toEqual(
      [
        'call_busy',
        'call_cancelled',
        'call_rejected',
        'call_unanswered',
        'transcription_generated',
        'message_delivered_to_all',
        'message_read_by_all',
        'message_pinned',
        'message_unpinned',
        'moderation_engine_approved',
        'moderation_engine_blocked',
        'moderation_manual_approved',
        'moderation_engine_failed',
      ].sort(),
    );
  });

  it('tells known triggers from unknown ones, by id or by event', () => {
    expect(isKnownTrigger('message_sent')).toBe(true);
    expect(isKnownTrigger('poll_voted')).toBe(false);
    expect(isKnownTrigger({ trigger: 'call_ended', data: {} })).toBe(true);
  });
});

describe('parseWebhook', () => {
  it.each(triggers)('parses fixtures/%s.json', (trigger) => {
    const parsed = parseWebhook(fixture(trigger));
    expect(parsed.trigger).toBe(trigger);
    expect(parsed).toEqual(event(trigger));
  });

  it('accepts a string, UTF-8 bytes, an ArrayBuffer and an already-parsed object alike', () => {
    const text = fixture('message_sent');
    const bytes = Buffer.from(text);
    const expected = event('message_sent');
    expect(parseWebhook(text)).toEqual(expected);
    expect(parseWebhook(bytes)).toEqual(expected);
    expect(parseWebhook(new Uint8Array(bytes).buffer)).toEqual(expected);
    expect(parseWebhook(expected)).toBe(expected);
  });

  it('tolerates a byte order mark in text and in bytes', () => {
    const text = `\uFEFF${fixture('message_sent')}`;
    expect(parseWebhook(text).trigger).toBe('message_sent');
    expect(parseWebhook(Buffer.from(text)).trigger).toBe('message_sent');
  });

  it('keeps every unknown field, at every level', () => {
    const delivery = event('message_sent');
    delivery.deliveryAttempt = 2;
    delivery.data.traceId = 'abc';
    delivery.data.message.reactions = [{ '👍': 3 }];
    delivery.data.message.data.entities.sender.entity.badge = 'gold';
    const parsed = parseWebhook(JSON.stringify(delivery)) as Record<string, any>;
    expect(parsed.deliveryAttempt).toBe(2);
    expect(parsed.data.traceId).toBe('abc');
    expect(parsed.data.message.reactions).toEqual([{ '👍': 3 }]);
    expect(parsed.data.message.data.entities.sender.entity.badge).toBe('gold');
  });

  it('takes new values of open sets, numeric-string ids and trimmed records', () => {
    const delivery = event('message_sent');
    delivery.data.message.category = 'custom';
    delivery.data.message.type = 'location';
    delivery.data.message.receiverType = 'broadcast';
    delivery.data.message.id = '90210';
    delivery.data.message.data.entities.sender.entity = { uid: 'superhero1', name: 'Iron Man' };
    delivery.data.message.data.entities.receiver.entity.status = 'away';
    expect(safeParseWebhook(delivery).success).toBe(true);
  });

  it('keeps call strings as strings and also tolerates real numbers and booleans there', () => {
    const joined = event('call_participant_joined');
    expect(typeof joined.data.occupant.audio_call).toBe('string');
    const parsed = parseWebhook(fixture('call_participant_joined')) as Record<string, any>;
    expect(parsed.data.occupant.audio_call).toBe(joined.data.occupant.audio_call);
    joined.data.occupant.audio_call = true;
    joined.data.initial_config.is_audio_only = false;
    expect(safeParseWebhook(joined).success).toBe(true);
    const recording = event('recording_generated');
    expect(recording.data.duration).toBe('21.433000');
    recording.data.duration = 21.433;
    expect(safeParseWebhook(recording).success).toBe(true);
  });

  it('accepts a call or meeting join without initial_config', () => {
    const joined = event('meeting_participant_joined');
    delete joined.data.initial_config;
    expect(safeParseWebhook(joined).success).toBe(true);
  });

  it('accepts a group message whose receiver entity is the group', () => {
    const mention = event('user_mentioned');
    expect(mention.data.message.data.entities.receiver.entityType).toBe('group');
    expect(safeParseWebhook(mention).success).toBe(true);
  });

  it.each(['message_edited', 'message_deleted'])('accepts %s as the documented action wrapper and as the message itself', (trigger) => {
    const wrapper = event(trigger);
    expect(wrapper.data.message.category).toBe('action');
    expect(safeParseWebhook(wrapper).success).toBe(true);
    const edited = { ...wrapper.data.message.data.entities.on.entity, data: { text: 'new text' } };
    expect(edited.category).toBe('message');
    const itself = { ...wrapper, data: { message: edited } };
    expect(parseWebhook(itself)).toBe(itself);
  });

  it('requires little of the call outcomes observed beyond the spec', () => {
    for (const action of ['busy', 'cancelled', 'rejected', 'unanswered']) {
      const trigger = `call_${action}`;
      expect(safeParseWebhook({ trigger, data: { call: { data: { action } } } }).success).toBe(true);
      expect(safeParseWebhook({ trigger, data: { call: { id: '1', data: { action, entities: { by: { entityType: 'user', entity: { uid: 'u' } } } } } } }).success).toBe(true);
      expect(safeParseWebhook({ trigger, data: { call: {} } }).error?.issues?.[0]?.path).toEqual(['data', 'call', 'data']);
      expect(safeParseWebhook({ trigger, data: { call: { id: 7, data: { action } } } }).success).toBe(false);
    }
  });

  it('does not require the envelope `type`, and recording_generated has none', () => {
    const started = event('call_started');
    delete started.type;
    expect(safeParseWebhook(started).success).toBe(true);
    expect('type' in event('recording_generated')).toBe(false);
  });

  it('yields an unknown trigger as an UnknownWebhookEvent, not an error', () => {
    const parsed = parseWebhook('{"trigger":"poll_voted","data":{"poll":{"id":"7"}},"appId":"a"}');
    expect(parsed.trigger).toBe('poll_voted');
    expect(isKnownTrigger(parsed)).toBe(false);
    expect(parsed.data).toEqual({ poll: { id: '7' } });
  });

  it('points payload errors at the exact path and keeps the raw body and the envelope', () => {
    const body = JSON.stringify({ trigger: 'message_sent', data: { message: { ...event('message_sent').data.message, id: 1421 } } });
    const result = safeParseWebhook(body);
    expect(result.success).toBe(false);
    const error = result.error as WebhookError;
    expect(error).toBeInstanceOf(WebhookError);
    expect(error.code).toBe('invalid_payload');
    expect(error.status).toBe(400);
    expect(error.issues?.map((issue) => issue.path.join('.'))).toEqual(['data.message.id']);
    expect(error.message).toContain('data.message.id');
    expect(error.rawBody).toBe(body);
    expect((error.event as { trigger: string }).trigger).toBe('message_sent');
  });

  it('decodes invalid UTF-8 with U+FFFD, as framework body parsers do, so every adapter answers alike', () => {
    const bytes = Buffer.concat([Buffer.from('{"trigger":"poll_voted","data":{"x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    const result = safeParseWebhook(bytes);
    expect(result.error).toBeUndefined();
    expect((result.event?.data as { x: string }).x).toBe('\uFFFD(');
    const broken = Buffer.concat([Buffer.from('{"trigger":'), Buffer.from([0xff])]);
    expect(safeParseWebhook(broken).error?.code).toBe('invalid_json');
  });

  it('refuses an empty or overlong trigger as an invalid envelope', () => {
    expect(safeParseWebhook('{"trigger":"","data":{}}').error?.code).toBe('invalid_envelope');
    expect(safeParseWebhook(JSON.stringify({ trigger: 'x'.repeat(10_000), data: {} })).error?.code).toBe('invalid_envelope');
  });

  it('throws the WebhookError from parseWebhook', () => {
    expect(() => parseWebhook('nope')).toThrowError(expect.objectContaining({ code: 'invalid_json', status: 400 }));
  });

  const invalidCases = readdirSync(new URL('../../fixtures/invalid/', import.meta.url)).filter((file) => file.endsWith('.json'));
  it.each(invalidCases)('fixtures/invalid/%s fails with its expected code', (file) => {
    const testCase = JSON.parse(readFileSync(new URL(`../../fixtures/invalid/${file}`, import.meta.url), 'utf8'));
    const result = safeParseWebhook(testCase.body);
    expect(result.success).toBe(false);
    expect(result.error?.code).toBe(testCase.expectedCode);
  });
});

describe('the trigger of a parsed event', () => {
  it('is the same text, whether parsed from text, from bytes, or handed over parsed (a frozen object is not written to)', () => {
    const text = fixture('message_sent');
    for (const parsed of [parseWebhook(text), parseWebhook(new TextEncoder().encode(text))]) {
      expect(parsed.trigger).toBe('message_sent');
      expect(JSON.stringify(parsed)).toBe(JSON.stringify(JSON.parse(text)));
    }
    const frozen = Object.freeze(event('message_sent'));
    expect(parseWebhook(frozen)).toBe(frozen);
    expect(frozen.trigger).toBe('message_sent');
    const unknown = parseWebhook('{"trigger":"poll_closed","data":{}}');
    expect(unknown.trigger).toBe('poll_closed');
  });
});
