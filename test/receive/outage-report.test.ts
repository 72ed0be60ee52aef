/**
 * The worker's account of an inbox that stops answering claims (src/delivery/outage.ts): one warning, one line
 * when it is back, and a pause that grows with each failed claim of a loop. The stores' own outages, with real
 * servers stopped and started: test/inbox/store-outage-*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Outage } from '../../src/delivery/outage.js';

function recorded() {
  const lines: Array<{ fields: Record<string, unknown>; message: string | undefined }> = [];
  return { lines, logger: { warn: (fields: Record<string, unknown>, message?: string) => void lines.push({ fields, message }) } };
}

describe('Outage', () => {
  it('warns at the first failed claim only, and once when a claim is answered again', () => {
    const { lines, logger } = recorded();
    const outage = new Outage('postgres', logger);
    outage.answered();
    expect(lines).toEqual([]);
    for (let streak = 1; streak <= 20; streak++) outage.failed(new Error('connect ECONNREFUSED'), streak);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      fields: { inbox: 'postgres', reason: 'connect ECONNREFUSED' },
      message:
        'The postgres inbox is not answering (connect ECONNREFUSED): no event is claimed until it does. ' +
        'Claims are tried again with a growing pause; one line will say when it is back.',
    });
    outage.answered();
    outage.answered();
    expect(lines).toHaveLength(2);
    expect(lines[1]!.fields).toMatchObject({ inbox: 'postgres', failedClaims: 20 });
    expect(lines[1]!.message).toMatch(/^The postgres inbox answers again after \d+\.\d s \(20 failed claims\); the worker claims events again\.$/);
    // A second outage right after a line is a flap: not a line of its own until it lasts (test/hostile/outage-flapping.test.ts).
    outage.failed(new Error('again'), 1);
    outage.answered();
    expect(lines).toHaveLength(2);
  });

  it('pauses 1 s doubling to 5 s at most, half of it random', () => {
    const outage = new Outage('redis', {});
    const pauses = (random: number) => [1, 2, 3, 4, 5, 50, 5000].map((streak) => outage.failed(new Error('down'), streak, () => random));
    expect(pauses(0)).toEqual([500, 1000, 2000, 2500, 2500, 2500, 2500]);
    expect(pauses(1)).toEqual([1000, 2000, 4000, 5000, 5000, 5000, 5000]);
  });
});
