/**
 * What `listen` records of each delivery (src/cli/captured.ts's Recorder), in-process: the verdict, code,
 * issues, key and "duplicate" for every kind of answer the receiver gives. send-listen.test.ts sees the same
 * records through the built CLI's NDJSON output.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Arrival, Recorder, maskHeaders } from '../../src/cli/captured.js';
import { sampleEvent } from '../../src/cli/sample-event.js';

const valid = JSON.stringify(sampleEvent('message_sent', { sequence: 0, count: 1, runId: 'cap' }));
const messageId = (JSON.parse(valid) as { data: { message: { id: string } } }).data.message.id;
const invalid = JSON.stringify({ trigger: 'message_sent', data: {} });
const unknown = JSON.stringify({ trigger: 'poll_closed', data: { id: 'p1' }, appId: 'app' });

const arrival = (status: number, rawBody: string, extra: Partial<Arrival> = {}): Arrival => ({ method: 'POST', path: '/hooks', status, answer: 'the answer', headers: {}, rawBody, ...extra });

describe('Recorder.record', () => {
  it('a valid event answered 200: valid, with its trigger, fields and key; the same again is a duplicate', () => {
    const recorder = new Recorder(60_000, 100);
    const before = Date.now();
    const first = recorder.record(arrival(200, valid, { headers: { authorization: 'Basic YTpi', 'x-trace': 't' } }));
    expect(first).toMatchObject({ seq: 1, method: 'POST', path: '/hooks', status: 200, verdict: 'valid', trigger: 'message_sent', duplicate: false, issues: [], rawBody: valid });
    expect(first.headers).toEqual({ authorization: 'Basic ••••••', 'x-trace': 't' });
    expect(first.fields).toContainEqual(['message', messageId]);
    expect(first.key).toMatch(new RegExp(`:message_sent:${messageId}$`));
    expect('code' in first || 'answer' in first).toBe(false);
    expect(Date.parse(first.receivedAt)).toBeGreaterThanOrEqual(before - 1);
    const again = recorder.record(arrival(204, valid));
    expect(again).toMatchObject({ seq: 2, verdict: 'valid', duplicate: true, key: first.key });
  });

  it('a refusal: the code of its status, the answer text, no key, no duplicate', () => {
    const recorder = new Recorder(60_000, 100);
    const codes = { 401: 'unauthorized', 403: 'app_mismatch', 405: 'method_not_allowed', 413: 'payload_too_large', 415: 'unsupported_media_type', 503: 'unavailable', 500: 'http_500', 300: 'http_300' };
    for (const [status, code] of Object.entries(codes)) {
      const record = recorder.record(arrival(Number(status), valid));
      expect(record).toMatchObject({ verdict: 'refused', code, answer: 'the answer', duplicate: false, issues: [], trigger: 'message_sent' });
      expect('key' in record).toBe(false);
    }
    // None of them was stored: the first accepted delivery is not a duplicate.
    expect(recorder.record(arrival(200, valid)).duplicate).toBe(false);
  });

  it('a body refused for itself: the verdict code, its issues only with a 400', () => {
    const recorder = new Recorder(60_000, 100);
    const notJson = recorder.record(arrival(400, 'not json'));
    expect(notJson).toMatchObject({ verdict: 'refused', code: 'invalid_json', fields: [] });
    expect(notJson.issues).toHaveLength(1);
    expect('trigger' in notJson).toBe(false);
    expect(recorder.record(arrival(415, 'not json'))).toMatchObject({ code: 'unsupported_media_type', issues: [] });
    expect(recorder.record(arrival(418, 'not json'))).toMatchObject({ code: 'invalid_json', issues: [] });
    const badPayload = recorder.record(arrival(400, invalid));
    expect(badPayload).toMatchObject({ verdict: 'refused', code: 'invalid_payload', trigger: 'message_sent' });
    expect(badPayload.issues.length).toBeGreaterThan(0);
    expect(recorder.record(arrival(400, valid))).toMatchObject({ code: 'http_400', issues: [] });
  });

  it('accepted but invalid: reported, keyed, never a duplicate (the receiver does not store it)', () => {
    const recorder = new Recorder(60_000, 100);
    const first = recorder.record(arrival(200, invalid));
    expect(first).toMatchObject({ verdict: 'invalid', code: 'invalid_payload', duplicate: false });
    expect(first.issues.length).toBeGreaterThan(0);
    expect(first.key).toMatch(/message_sent/);
    expect(recorder.record(arrival(200, invalid)).duplicate).toBe(false);
  });

  it('an unknown trigger accepted: unknown, keyed, a repeat is a duplicate', () => {
    const recorder = new Recorder(60_000, 100);
    const first = recorder.record(arrival(200, unknown));
    expect(first).toMatchObject({ verdict: 'unknown', trigger: 'poll_closed', fields: [], issues: [], duplicate: false });
    expect(first.key).toMatch(/poll_closed/);
    expect(recorder.record(arrival(299, unknown)).duplicate).toBe(true);
  });
});

describe('Recorder windows and odd answers', () => {
  afterEach(() => vi.useRealTimers());

  it('a repeat within the window is a duplicate, one arriving exactly windowMs later is not, and the old key is forgotten', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.parse('2026-01-01T00:00:00Z');
    vi.setSystemTime(start);
    const recorder = new Recorder(1_000, 100);
    expect(recorder.record(arrival(200, valid)).duplicate).toBe(false);
    vi.setSystemTime(start + 999);
    expect(recorder.record(arrival(200, valid)).duplicate).toBe(true);
    vi.setSystemTime(start + 1_000);
    expect(recorder.record(arrival(200, valid)).duplicate).toBe(false); // stored again at +1 000
    vi.setSystemTime(start + 2_000);
    recorder.record(arrival(200, unknown)); // the valid event's key is exactly 1 000 ms old: forgotten
    expect(recorder.remembered).toBe(1);
    vi.setSystemTime(start + 2_500);
    expect(recorder.record(arrival(200, valid)).duplicate).toBe(false);
  });

  it('a status below 200 is a refusal; a 2xx for a body that is no event has no key', () => {
    const recorder = new Recorder(60_000, 100);
    expect(recorder.record(arrival(199, valid))).toMatchObject({ verdict: 'refused', code: 'http_199' });
    const odd = recorder.record(arrival(200, 'not json'));
    expect('key' in odd).toBe(false);
    expect(odd.duplicate).toBe(false);
  });
});

describe('maskHeaders, the scheme', () => {
  it('keeps the scheme only of Authorization and Proxy-Authorization themselves, and only before a space', () => {
    expect(
      maskHeaders({
        'authorization-token': 'Bearer abc',
        'session-authorization': 'Basic abc',
        authorization: 'opaque-token-without-scheme',
        'proxy-authorization': ' Bearer x',
        'Proxy-Authorization': 'Digest a b',
      }),
    ).toEqual({
      'authorization-token': '••••••',
      'session-authorization': '••••••',
      authorization: '••••••',
      'proxy-authorization': '••••••',
      'Proxy-Authorization': 'Digest ••••••',
    });
  });
});
