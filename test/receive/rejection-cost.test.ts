/**
 * The cost of rejecting a payload is bounded: zod would build one issue per bad element (a 1 MiB message_sent
 * whose `tags` are 500 000 zeros took seconds and ~500 MB of heap), so only the first few are explained.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { safeParseWebhook } from '../../src/index.js';
import { MAX_REPORTED_ISSUES } from '../../src/receive/parse/explain.js';
// zod's side, loaded as chat-webhooks/schemas loads it: synchronous explanations from the first rejection on.
import '../../src/receive/schemas.js';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8'));
const copy = () => structuredClone(fixture);

/** The heap growth of one rejection (from after a forced GC when --expose-gc is on). */
function measure(body: string) {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const result = safeParseWebhook(body);
  return { result, heapGrowthMb: (process.memoryUsage().heapUsed - heapBefore) / 1e6 };
}

describe('bounded work per rejection', () => {
  it('a 1 MiB message_sent whose tags are 500 000 zeros is rejected with a bounded explanation, the first issue at tags.0', () => {
    const event = copy();
    event.data.message.tags = new Array(500_000).fill(0);
    const body = JSON.stringify(event);
    expect(body.length).toBeGreaterThan(1_000_000);
    const { result, heapGrowthMb } = measure(body);
    expect(result.success).toBe(false);
    const issues = result.error?.issues ?? [];
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.length).toBeLessThanOrEqual(MAX_REPORTED_ISSUES);
    expect(issues[0]?.path).toEqual(['data', 'message', 'tags', 0]);
    // zod's explanation of every element took 2+ seconds and ~500 MB; time is left to bench/ (a shared
    // machine's pace is no measure), the issue count and the heap are what fail here.
    expect(heapGrowthMb).toBeLessThan(150);
  });

  it('a bad element far into a long array is found at its real index', () => {
    const event = copy();
    event.data.message.tags = [...new Array(100_000).fill('ok'), 7, ...new Array(1000).fill(0)];
    const { result } = measure(JSON.stringify(event));
    expect(result.success).toBe(false);
    expect(result.error?.issues?.[0]?.path).toEqual(['data', 'message', 'tags', 100_000]);
    expect(result.error?.issues?.length).toBeLessThanOrEqual(MAX_REPORTED_ISSUES);
  });

  it('a record with 50 000 invalid users is rejected naming the first, the explanation bounded', () => {
    const event = copy();
    event.data.message.data.mentions = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`u${i}`, { uid: i }]));
    const { result } = measure(JSON.stringify(event));
    expect(result.success).toBe(false);
    expect(result.error?.issues?.[0]?.path.slice(0, 5)).toEqual(['data', 'message', 'data', 'mentions', 'u0']);
    expect(result.error?.issues?.length).toBeLessThanOrEqual(MAX_REPORTED_ISSUES);
  });

  it('arrays of bad elements under a union (attachments of a receiver entity) stay bounded too', () => {
    const event = copy();
    event.data.message.data.entities.receiver.entity = { uid: 5, tags: new Array(200_000).fill(0) };
    const { result } = measure(JSON.stringify(event));
    expect(result.success).toBe(false);
    expect(result.error?.issues?.length).toBeLessThanOrEqual(MAX_REPORTED_ISSUES);
    expect(result.error?.issues?.[0]?.path.slice(0, 6)).toEqual(['data', 'message', 'data', 'entities', 'receiver', 'entity']);
  });

  it('small invalid payloads keep zod’s full explanation (every issue, its message and path)', () => {
    const event = copy();
    event.data.message.id = 1;
    event.data.message.sender = 2;
    const { result } = measure(JSON.stringify(event));
    const paths = result.error?.issues?.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['data.message.id', 'data.message.sender']));
    expect(result.error?.message).toContain('data.message.id');
  });
});

describe('the bounded explanation agrees with zod', () => {
  /** Puts `bad` somewhere along a random path of the event (replacing what was there), in a large event. */
  function corrupt(event: Record<string, unknown>, steps: number[], bad: unknown): void {
    let node: unknown = event;
    for (const step of steps) {
      const keys = typeof node === 'object' && node !== null ? Object.keys(node) : [];
      if (keys.length === 0) break;
      const key = keys[step % keys.length] as string;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child !== 'object' || child === null || step % 5 === 0) {
        (node as Record<string, unknown>)[key] = bad;
        return;
      }
      node = child;
    }
  }

  it('each reported issue (path and code) is one zod reports for the whole event', async () => {
    const { default: fc } = await import('fast-check');
    const { eventSchemaOf } = await import('../../src/events/event-schema.js');
    const { explainRejection } = await import('../../src/receive/parse/explain.js');
    const schema = eventSchemaOf('message_sent');
    fc.assert(
      fc.property(
        fc.array(fc.nat(50), { minLength: 1, maxLength: 8 }),
        fc.constantFrom<unknown>(0, null, 'x', [], {}, [1, 2], true),
        fc.integer({ min: 0, max: 3000 }),
        (steps, bad, badTags) => {
          const event = copy();
          // Enough values that the bounded path is taken (over 2 000), some of them bad.
          event.data.message.tags = [...new Array(2500).fill('ok'), ...new Array(badTags).fill(0)];
          corrupt(event, steps, bad);
          const full = schema.safeParse(event);
          // The receiver asks only about events its validator rejected (and it agrees with zod).
          if (full.success) return true;
          const explained = explainRejection(schema, event);
          const known = new Set(full.error.issues.map((issue) => `${issue.code} ${JSON.stringify(issue.path)}`));
          return (
            explained !== undefined &&
            explained.length > 0 &&
            explained.length <= MAX_REPORTED_ISSUES &&
            explained.every((issue) => issue.code === 'custom' || known.has(`${issue.code} ${JSON.stringify(issue.path)}`))
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
