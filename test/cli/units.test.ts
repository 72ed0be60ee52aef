/** The CLI's own pieces, in process: generated events, overrides, percentiles, suggestions, input splitting. */
import { describe, expect, it } from 'vitest';
import { isKnownTrigger, safeParseWebhook, triggers } from '../../src/index.js';
import { applyOverride, parseOverride } from '../../src/cli/overrides.js';
import { splitDocuments } from '../../src/cli/read-input.js';
import { sampleEvent } from '../../src/cli/sample-event.js';
import { percentile, summarize } from '../../src/cli/stats.js';
import { closest } from '../../src/text/suggest.js';

describe('sampleEvent', () => {
  it.each(triggers.map((trigger) => [trigger]))('%s: valid, and two events of one run differ', (trigger) => {
    const first = sampleEvent(trigger, { sequence: 0, count: 2, runId: 'abc123' });
    const second = sampleEvent(trigger, { sequence: 1, count: 2, runId: 'abc123' });
    expect(safeParseWebhook(first).success).toBe(true);
    expect(safeParseWebhook(second).success).toBe(true);
    expect(JSON.stringify(first)).not.toBe(JSON.stringify(second));
  });

  it('keeps references consistent: a receipt names the same message id in every place', () => {
    const event = sampleEvent('message_read_receipt', { sequence: 0, count: 1, runId: 'r' }) as { data: { body: { messageId: string } } };
    expect(event.data.body.messageId).toMatch(/^\d+$/);
    expect(event.data.body.messageId).not.toBe('1421');
  });

  it('moves timestamps to now, keeping seconds as seconds and milliseconds as milliseconds', () => {
    const now = Date.now();
    const event = sampleEvent('user_connection_status_changed', { sequence: 0, count: 1, runId: 'r' }) as {
      data: { timestamp: number; user: { lastActiveAt: number } };
    };
    expect(Math.abs(event.data.timestamp - now)).toBeLessThan(5_000);
    expect(Math.abs(event.data.user.lastActiveAt - now / 1000)).toBeLessThan(3_600);
  });
});

describe('overrides', () => {
  const event = () => ({ trigger: 'message_sent', data: { message: { id: '1', sentAt: 5, tags: ['a'] } } }) as Record<string, unknown>;

  it('keeps text where the field holds text, and reads JSON elsewhere', () => {
    const target = event();
    for (const text of ['data.message.id=42', 'data.message.sentAt=7', 'data.message.tags.0=b']) applyOverride(target, parseOverride(text));
    applyOverride(target, parseOverride('data.message.extra={"a":true}', 'add'));
    expect(target.data).toEqual({ message: { id: '42', sentAt: 7, extra: { a: true }, tags: ['b'] } });
  });

  it('--add creates missing objects and keeps = signs in the value', () => {
    const target = event();
    applyOverride(target, parseOverride('data.new.deep=a=b', 'add'));
    expect((target.data as { new: unknown }).new).toEqual({ deep: 'a=b' });
  });

  it('--set refuses a path the event does not have, naming the closest ones it has, and changes nothing', () => {
    const target = event();
    expect(() => applyOverride(target, parseOverride('data.mesage.id=5'))).toThrow(
      '--set data.mesage.id: the event has no "data.mesage". Did you mean "data.message.id"? To add a new field, use --add data.mesage.id=5.',
    );
    expect(() => applyOverride(target, parseOverride('data.message.sentat=1'))).toThrow(/no "data.message.sentat". Did you mean "data.message.sentAt"\?/);
    expect(() => applyOverride(target, parseOverride('data.message.tags.1=x'))).toThrow(/no "data.message.tags.1"/);
    expect(() => applyOverride(target, parseOverride('zzz=1'))).toThrow(/^--set zzz: the event has no "zzz". To add/);
    expect(target).toEqual(event());
  });

  it('refuses paths through a value or into the prototype', () => {
    expect(() => applyOverride(event(), parseOverride('data.message.id.x=1'))).toThrow(/holds "1", not an object/);
    expect(() => parseOverride('__proto__.polluted=1')).toThrow(/forbidden/);
    expect(() => parseOverride('=1')).toThrow(/path=value/);
  });
});

describe('stats', () => {
  it('nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });

  it('counts statuses, and deliveries without an answer as errors', () => {
    const summary = summarize([{ status: 200, ms: 1 }, { status: 503, ms: 3 }, { ms: 2, error: 'ECONNREFUSED' }], 1000);
    expect(summary).toMatchObject({ count: 3, ok: 1, failed: 2, statuses: { 200: 1, 503: 1, error: 1 }, p50Ms: 2, p99Ms: 3 });
  });
});

describe('suggestions', () => {
  it('finds near trigger names, and none for nonsense', () => {
    expect(closest('mesage_sent', triggers)[0]).toBe('message_sent');
    expect(closest('call_end', triggers)).toContain('call_ended');
    expect(closest('zzzzzzzzzzzz', triggers)).toEqual([]);
    expect(triggers.every((trigger) => isKnownTrigger(trigger))).toBe(true);
  });
});

describe('splitDocuments', () => {
  it('one JSON document over several lines stays one', () => {
    expect(splitDocuments('{\n "trigger": "x",\n "data": {}\n}\n')).toHaveLength(1);
  });

  it('NDJSON gives one document per non-empty line, with line numbers', () => {
    expect(splitDocuments('{"a":1}\n\n{"b":2}\n').map(({ line }) => line)).toEqual([1, 3]);
  });

  it('a listen --json record gives its raw body', () => {
    const record = JSON.stringify({ seq: 1, trigger: 'x', rawBody: '{"trigger":"x","data":{}}' });
    expect(splitDocuments(`${record}\n${record}\n`)[0]?.body).toBe('{"trigger":"x","data":{}}');
  });
});
