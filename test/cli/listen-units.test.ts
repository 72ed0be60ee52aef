/**
 * The parts `listen` is made of, each alone: what the recorder remembers for "duplicate" (bounded like the
 * receiver's memory inbox), which headers are masked, which `Host` values the page answers, and the live
 * feed's bounded history (its subscribers over real sockets are in listen-memory.test.ts).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { escapeControl } from '../../src/index.js';
import { maskHeaders, Recorder, type Captured } from '../../src/cli/captured.js';
import { allowedHosts } from '../../src/cli/page/guard.js';
import { LiveFeed } from '../../src/cli/page/live-feed.js';

const arrival = (guid: string) => ({
  method: 'POST',
  path: '/',
  status: 200,
  answer: '',
  headers: {},
  rawBody: JSON.stringify({ trigger: 'group_deleted', data: { group: { guid } } }),
});

describe('escapeControl (public, what listen prints names and keys through)', () => {
  it('writes every C0/C1 control, DEL and U+2028/2029 as a \\u escape, and leaves other text alone', () => {
    expectTypeOf(escapeControl).toEqualTypeOf<(text: string) => string>();
    expect(escapeControl('a\nb\r\u001b[2J\u007f\u009b\u2028\u2029 é ✓')).toBe('a\\u000ab\\u000d\\u001b[2J\\u007f\\u009b\\u2028\\u2029 é ✓');
  });
});

describe('Recorder', () => {
  it('remembers at most maxKeys keys, the oldest forgotten first', () => {
    const recorder = new Recorder(60_000, 3);
    for (let i = 0; i < 10; i++) expect(recorder.record(arrival(`g${i}`)).duplicate).toBe(false);
    expect(recorder.remembered).toBe(3);
    expect(recorder.record(arrival('g9')).duplicate).toBe(true);
    // g0 was forgotten: it counts as new again (and now pushes out g7).
    expect(recorder.record(arrival('g0')).duplicate).toBe(false);
    expect(recorder.record(arrival('g7')).duplicate).toBe(false);
    expect(recorder.remembered).toBe(3);
  });

  it('forgets keys older than the window', async () => {
    const recorder = new Recorder(20, 100);
    recorder.record(arrival('a'));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(recorder.record(arrival('b')).duplicate).toBe(false);
    expect(recorder.remembered).toBe(1);
    expect(recorder.record(arrival('a')).duplicate).toBe(false);
  });
});

describe('maskHeaders', () => {
  it('masks credentials, keeps the scheme of Authorization and every other header', () => {
    expect(
      maskHeaders({
        authorization: 'Basic YXBwOnB3',
        'proxy-authorization': 'Bearer abc',
        cookie: 'session=1',
        'x-api-key': 'k',
        'x-auth-token': 't',
        'content-type': 'Application/json',
        'user-agent': 'platform',
      }),
    ).toEqual({
      authorization: 'Basic ••••••',
      'proxy-authorization': 'Bearer ••••••',
      cookie: '••••••',
      'x-api-key': '••••••',
      'x-auth-token': '••••••',
      'content-type': 'Application/json',
      'user-agent': 'platform',
    });
  });
});

describe('allowedHosts', () => {
  it('the loopback names with the port, and --host when it names one interface', () => {
    expect([...allowedHosts('127.0.0.1', 3000)]).toEqual(['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
    expect(allowedHosts('0.0.0.0', 3000).size).toBe(3);
    expect(allowedHosts('::', 3000).size).toBe(3);
    expect(allowedHosts('192.168.1.5', 3000).has('192.168.1.5:3000')).toBe(true);
    expect(allowedHosts('::1', 3000).has('[::1]:3000')).toBe(true);
    expect(allowedHosts('My-Box.local', 8080).has('my-box.local:8080')).toBe(true);
    expect(allowedHosts('127.0.0.1', 80).has('localhost')).toBe(true);
    expect(allowedHosts('127.0.0.1', 3000).has('localhost')).toBe(false);
  });
});

describe('LiveFeed history', () => {
  const record = (seq: number, size: number): Captured => ({
    seq,
    receivedAt: '2026-01-01T00:00:00.000Z',
    method: 'POST',
    path: '/',
    status: 200,
    verdict: 'valid',
    fields: [],
    issues: [],
    duplicate: false,
    headers: {},
    rawBody: 'x'.repeat(size),
  });

  it('keeps at most maxRecords and maxBytes (the newest always), and finds what it keeps', () => {
    const feed = new LiveFeed<string>({ maxRecords: 5, maxBytes: 10_000, maxSubscribers: 2 });
    for (let seq = 1; seq <= 8; seq++) feed.publish(record(seq, 100), `extra ${seq}`);
    expect(feed.size.records).toBe(5);
    expect(feed.recent(Infinity).map((kept) => kept.seq)).toEqual([4, 5, 6, 7, 8]);
    feed.publish(record(9, 6_000), 'big');
    feed.publish(record(10, 6_000), 'bigger');
    expect(feed.recent(Infinity).map((kept) => kept.seq)).toEqual([10]);
    expect(feed.size.bytes).toBeGreaterThan(6_000);
    expect(feed.find(10)).toEqual({ record: record(10, 6_000), extra: 'bigger' });
    expect(feed.find(9)).toBeUndefined();
    feed.publish(record(11, 200_000), 'past the limit alone');
    expect(feed.recent(Infinity).map((kept) => kept.seq)).toEqual([11]);
    expect(feed.recent(1_000)).toEqual([]);
    feed.close();
  });
});
