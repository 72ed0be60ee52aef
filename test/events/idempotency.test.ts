/** Idempotency keys: the documented fields per trigger, the body digest otherwise, and overrides. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { idempotencyKey, triggers, type ParsedWebhook } from '../../src/index.js';
import { appIdOf, idempotencyFields } from '../../src/events/index.js';
import { keyFunctions } from '../../src/receive/idempotency.js';

const raw = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const fixture = (name: string) => JSON.parse(raw(name)) as ParsedWebhook;

/** Every fixture's envelope carries this app id. */
const APP = '2601c4f1a2b3c4d5';

describe('idempotencyKey', () => {
  it.each([
    ['message_sent', 'wh_chat_events:message_sent:1421'],
    ['message_edited', 'wh_chat_events:message_edited:1422'],
    ['message_deleted', 'wh_chat_events:message_deleted:1431'],
    ['call_initiated', 'wh_chat_events:call_initiated:1440:1763699990'],
    ['call_started', 'wh_chat_events:call_started:v1.us.2601c4f1a2b3c4d5.1763699990a7f3c1e9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0:1763699998'],
    ['call_participant_joined', 'wh_chat_events:call_participant_joined:v1.us.2601c4f1a2b3c4d5.1763699990a7f3c1e9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0:1763699999'],
    ['call_participant_left', 'wh_chat_events:call_participant_left:v1.us.2601c4f1a2b3c4d5.1763699990a7f3c1e9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0:1763700022'],
    ['call_ended', 'wh_chat_events:call_ended:v1.us.2601c4f1a2b3c4d5.1763699990a7f3c1e9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0:1763700023'],
    ['recording_generated', 'wh_chat_events:recording_generated:v1.us.2601c4f1a2b3c4d5.1763699990a7f3c1e9b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0:1763700000'],
  ])('%s uses the documented fields, after the app id', (trigger, key) => {
    expect(idempotencyKey(fixture(trigger), raw(trigger))).toBe(`${APP}:${key}`);
  });

  it('every trigger with documented fields gets a field key from its fixture; every key starts with app, webhook and trigger', () => {
    for (const trigger of triggers) {
      const key = idempotencyKey(fixture(trigger), raw(trigger));
      expect(key.startsWith(`${APP}:wh_chat_events:${trigger}:`)).toBe(true);
      expect(key.includes(':#')).toBe(!(trigger in idempotencyFields));
    }
  });

  it('a key depends only on its own event, whatever events came before (the prefix of the last one is remembered)', () => {
    const sent = fixture('message_sent');
    const variants: Array<[Record<string, unknown>, string]> = [
      [{}, `${APP}:wh_chat_events:message_sent:1421`],
      [{ appId: 'other:app' }, 'other%3Aapp:wh_chat_events:message_sent:1421'],
      [{ appId: 7 }, '7:wh_chat_events:message_sent:1421'],
      [{ appId: undefined }, ':wh_chat_events:message_sent:1421'],
      [{ webhook: 'wh#2' }, `${APP}:wh%232:message_sent:1421`],
      [{ webhook: undefined }, `${APP}::message_sent:1421`],
      [{ webhook: 5 }, `${APP}::message_sent:1421`],
      [{ trigger: 'message_edited' }, `${APP}:wh_chat_events:message_edited:1421`],
    ];
    // Each in turn, then again in the other order: every key is the one its own fields make.
    for (const [fields, key] of [...variants, ...[...variants].reverse(), ...variants]) {
      expect(idempotencyKey({ ...sent, ...fields } as ParsedWebhook)).toBe(key);
    }
  });

  it('events sharing a message id but not a trigger get different keys (a receipt is not the message)', () => {
    const sent = fixture('message_sent');
    const receipt = fixture('message_read_receipt');
    expect(idempotencyKey(sent)).not.toBe(idempotencyKey(receipt));
  });

  it('an edit and a delete are keyed by their action message, not by the bytes: a rebuilt body meets the delivered one (issue 35)', () => {
    for (const trigger of ['message_edited', 'message_deleted']) {
      const event = fixture(trigger);
      expect(idempotencyKey(event, raw(trigger))).toBe(idempotencyKey(event, JSON.stringify(event, null, 1)));
    }
    const edit = fixture('message_edited') as ParsedWebhook & { data: { message: Record<string, unknown> } };
    const secondEdit = { ...edit, data: { message: { ...edit.data.message, id: '1423' } } } as ParsedWebhook;
    expect(idempotencyKey(secondEdit)).not.toBe(idempotencyKey(edit));
  });

  it('other triggers: a digest of the exact body, so a one-byte difference is another key', () => {
    const body = raw('group_created');
    const event = fixture('group_created');
    expect(idempotencyKey(event, body)).toBe(idempotencyKey(event, body));
    expect(idempotencyKey(event, body)).not.toBe(idempotencyKey(event, body.replace('{', '{ ')));
    expect(idempotencyKey(event, new TextEncoder().encode(body))).toBe(idempotencyKey(event, body));
  });

  it('falls back to the body when a documented field is missing, and reads numeric-string ids as the same key', () => {
    const event = fixture('call_initiated') as ParsedWebhook & { data: { call: Record<string, unknown> } };
    const numeric = { ...event, data: { ...event.data, call: { ...event.data.call, id: 1440 } } } as ParsedWebhook;
    expect(idempotencyKey(numeric)).toBe(idempotencyKey(event));
    const missing = { ...event, data: { ...event.data, call: { ...event.data.call, sentAt: undefined } } } as ParsedWebhook;
    expect(idempotencyKey(missing)).toMatch(new RegExp(`^${APP}:wh_chat_events:call_initiated:#`));
  });

  it('an unknown trigger named like an Object method still gets a body key', () => {
    const event = { trigger: 'constructor', data: {} } as ParsedWebhook;
    expect(idempotencyKey(event, '{}')).toMatch(/^::constructor:#/);
  });

  it('a field that is not a usable id falls back to the body: empty, NaN, ±Infinity, null, an object, a boolean, a path through a scalar', () => {
    const event = { ...fixture('message_sent'), appId: undefined } as ParsedWebhook & { data: { message: Record<string, unknown> } };
    const withId = (id: unknown) => ({ ...event, data: { ...event.data, message: { ...event.data.message, id } } }) as ParsedWebhook;
    for (const id of ['', Number.NaN, Infinity, -Infinity, null, { id: 1 }, true]) {
      expect(idempotencyKey(withId(id), '{}'), String(id)).toMatch(/^:wh_chat_events:message_sent:#/);
    }
    for (const message of [null, 'a string', 1421]) {
      const through = { ...event, data: { ...event.data, message } } as ParsedWebhook;
      expect(idempotencyKey(through, '{}'), String(message)).toMatch(/^:wh_chat_events:message_sent:#/);
    }
    expect(idempotencyKey({ ...event, data: null } as unknown as ParsedWebhook, '{}')).toMatch(/^:wh_chat_events:message_sent:#/);
    expect(idempotencyKey(withId(0))).toBe(':wh_chat_events:message_sent:0');
    expect(idempotencyKey(withId('0'))).toBe(':wh_chat_events:message_sent:0');
  });

  it('a webhook id that is not a string leaves its place empty (issue 25), as a missing appId does (issue 33)', () => {
    const event = { ...fixture('message_sent'), appId: undefined };
    for (const webhook of [undefined, 42, null, '']) {
      expect(idempotencyKey({ ...event, webhook } as ParsedWebhook)).toBe('::message_sent:1421');
    }
    // The body fallback too: the demo's sample body has neither appId nor webhook.
    const bare = { trigger: 'group_created', data: {} } as ParsedWebhook;
    expect(idempotencyKey(bare, '{}')).toMatch(/^::group_created:#/);
  });
});

describe('idempotencyKey per app (issue 23)', () => {
  const event = fixture('message_sent');
  const ofApp = (appId: unknown, webhook: unknown = 'wh_chat_events') => ({ ...event, appId, webhook }) as ParsedWebhook;

  it('starts with the envelope\'s appId: equal webhook and message ids of two apps make two keys', () => {
    expect(idempotencyKey(ofApp('app-a'))).toBe('app-a:wh_chat_events:message_sent:1421');
    expect(idempotencyKey(ofApp('app-b'))).toBe('app-b:wh_chat_events:message_sent:1421');
    // The body fallback too.
    const other = { ...fixture('group_created'), webhook: 'wh' } as ParsedWebhook;
    expect(idempotencyKey({ ...other, appId: 'a' } as ParsedWebhook, '{}')).toMatch(/^a:wh:group_created:#/);
    expect(idempotencyKey({ ...other, appId: 'a' } as ParsedWebhook, '{}')).not.toBe(
      idempotencyKey({ ...other, appId: 'b' } as ParsedWebhook, '{}'),
    );
  });

  it('without an appId (absent, empty, null, an object, NaN) the app\'s place stays, empty (issue 33)', () => {
    for (const appId of [undefined, '', null, { id: 'a' }, Number.NaN, true]) {
      expect(idempotencyKey(ofApp(appId)), String(appId)).toBe(':wh_chat_events:message_sent:1421');
    }
  });

  it('a numeric appId is read as its decimal text: 7 and "7" are one app', () => {
    expect(idempotencyKey(ofApp(7))).toBe('7:wh_chat_events:message_sent:1421');
    expect(idempotencyKey(ofApp(7))).toBe(idempotencyKey(ofApp('7')));
    expect(appIdOf({ appId: 0 })).toBe('0');
    expect(appIdOf({ appId: Infinity })).toBeUndefined();
  });

  it('an appId without a webhook id keeps the webhook\'s place, so it never reads as a webhook id', () => {
    expect(idempotencyKey(ofApp('a', null))).toBe('a::message_sent:1421');
    expect(idempotencyKey(ofApp('a', null))).not.toBe(idempotencyKey(ofApp(undefined, 'a')));
  });

  it('an override\'s key goes after the app id too', () => {
    const { keyOf } = keyFunctions({ message_sent: () => 'mine' });
    expect(keyOf(ofApp('app-a'))).toBe('app-a:wh_chat_events:message_sent:mine');
    expect(keyOf(ofApp('app-b'))).not.toBe(keyOf(ofApp('app-a')));
  });
});
