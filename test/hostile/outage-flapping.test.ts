/**
 * The outage reporter (src/delivery/outage.ts) against a flapping store: down a second, back a second, for an
 * hour. Its lines stay bounded (two a minute at most), a store that then stays down is still announced, and
 * the end of every announced outage is said. The clock is the only thing faked: an hour in a few ms.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Outage } from '../../src/delivery/outage.js';

const lines: string[] = [];
const logger = { warn: (_fields: unknown, message: string) => void lines.push(message) };
const down = new Error('connect ECONNREFUSED');

beforeEach(() => {
  lines.length = 0;
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(0);
});
afterEach(() => vi.useRealTimers());

const tick = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe('a flapping store', () => {
  it('an hour of one-second flaps: at most two lines a minute, and the last line says it is back', () => {
    const outage = new Outage('postgres', logger);
    for (let second = 0; second < 3600; second += 2) {
      outage.failed(down, 1);
      tick(1000);
      outage.answered();
      tick(1000);
    }
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(2 * 61);
    expect(lines.at(-1)).toMatch(/answers again/);
    expect(lines.some((line) => /brief outages/.test(line))).toBe(true);
  });

  it('after the flapping, a store that stays down is announced within SETTLE_MS, and its return said', () => {
    const outage = new Outage('redis', logger);
    outage.failed(down, 1);
    outage.answered();
    tick(1000);
    outage.failed(down, 1);
    outage.answered();
    const before = lines.length;
    for (let streak = 1; streak <= 5; streak++) {
      tick(2500);
      outage.failed(down, streak);
    }
    expect(lines.length).toBe(before + 1);
    expect(lines.at(-1)).toMatch(/not answering/);
    outage.answered();
    expect(lines.at(-1)).toMatch(/answers again/);
  });

  it('a single outage still makes one warning and one recovery line', () => {
    const outage = new Outage('sqlite', logger);
    for (let streak = 1; streak <= 3; streak++) outage.failed(down, streak);
    outage.answered();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/not answering \(connect ECONNREFUSED\)/);
    expect(lines[1]).toMatch(/answers again after 0\.0 s \(3 failed claims\)/);
  });
});
