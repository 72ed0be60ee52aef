/**
 * explainRejection on large values (src/receive/parse/explain.ts): the walk to the innermost rejected part through
 * each kind of container, wrappers, unions explained on a sample, and the cap on issues (found by mutation
 * testing, tools/mutation/results.md). Large means more than the 2 000 values zod explains whole.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { explainRejection, MAX_REPORTED_ISSUES } from '../../src/receive/parse/explain.js';

const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);
const paths = (issues: ReturnType<typeof explainRejection>) => issues?.map((issue) => issue.path);

/**
 * explainRejection with a check that zod never parses the whole value: that is the cost the walk avoids. A
 * mutant that loses its way in the walk still gets the right answer from the whole-value fallback, so the
 * answer alone cannot tell.
 */
function explainWithoutWhole(schema: z.ZodType, value: unknown) {
  const whole = vi.spyOn(schema, 'safeParse');
  const issues = explainRejection(schema, value);
  expect(whole).not.toHaveBeenCalled();
  whole.mockRestore();
  return issues;
}

describe('explainRejection of a large value, without parsing it whole', () => {
  it('arrays, records, missing fields and catchalls, each with several bad parts: only the first is named', () => {
    const list = z.object({ list: z.array(z.number()) });
    expect(paths(explainWithoutWhole(list, { list: [...numbers(3000), 'bad', 'worse'] }))).toEqual([['list', 3000]]);
    const record = z.object({ users: z.record(z.string(), z.object({ id: z.number() })) });
    const users = Object.fromEntries(numbers(3000).map((i) => [`u${i}`, { id: i }]));
    users.u2500 = { id: 'nope' as never };
    users.u2600 = { id: 'nope' as never };
    expect(paths(explainWithoutWhole(record, { users }))).toEqual([['users', 'u2500', 'id']]);
    const fields = z.object({ big: z.array(z.number()), maybe: z.string().optional(), needed: z.string(), also: z.string() });
    expect(paths(explainWithoutWhole(fields, { big: numbers(3000) }))).toEqual([['needed']]);
    const extras = z.object({ big: z.array(z.number()) }).catchall(z.string());
    expect(paths(explainWithoutWhole(extras, { big: numbers(3000), fine: 'text', wrong: 5, worse: 6 }))).toEqual([['wrong']]);
  });

  it('looks through optional, nullable and nonoptional wrappers', () => {
    const value = { list: [...numbers(3000), 'x', 'y'] };
    for (const schema of [
      z.object({ list: z.array(z.number()).optional() }),
      z.object({ list: z.array(z.number()).nullable() }),
      z.object({ list: z.array(z.number()).optional() }).required(),
    ]) {
      expect(paths(explainWithoutWhole(schema, value))).toEqual([['list', 3000]]);
    }
  });

  it('an array or null where an object belongs is named there, not inside it', () => {
    const schema = z.object({ big: z.array(z.number()), inner: z.object({ a: z.string() }), map: z.record(z.string(), z.string()) });
    for (const wrong of [[], null]) {
      const issues = explainWithoutWhole(schema, { big: numbers(3000), inner: wrong, map: {} });
      expect(paths(issues)).toEqual([['inner']]);
      expect(issues?.[0]?.code).toBe('invalid_type');
      const inMap = explainWithoutWhole(schema, { big: numbers(3000), inner: { a: 'x' }, map: wrong });
      expect(paths(inMap)).toEqual([['map']]);
    }
  });

  it('a scalar where an array or a record belongs is named there', () => {
    const schema = z.object({ big: z.array(z.number()), list: z.array(z.number()), map: z.record(z.string(), z.number()) });
    for (const wrong of ['text', 5]) {
      expect(paths(explainWithoutWhole(schema, { big: numbers(3000), list: wrong, map: {} }))).toEqual([['list']]);
      expect(paths(explainWithoutWhole(schema, { big: numbers(3000), list: [], map: wrong }))).toEqual([['map']]);
    }
  });

  it('explains parts whose schemas carry checks the compiler leaves to zod', () => {
    const schema = z.object({ big: z.array(z.number()), name: z.string().min(3), tags: z.array(z.string().min(2)) });
    const issues = explainWithoutWhole(schema, { big: numbers(3000), name: 'ab', tags: ['ok'] });
    expect(paths(issues)).toEqual([['name']]);
    expect(issues?.[0]?.code).toBe('too_small');
  });
});

describe('explainRejection of a part rejected for a check on itself', () => {
  it('whose children all pass is explained at the part: an array too short, a record key, an object refinement', () => {
    const big = numbers(3000);
    const list = z.object({ big: z.array(z.number()), list: z.array(z.number()).min(5) });
    const short = explainWithoutWhole(list, { big, list: [1, 2] });
    expect(short).toEqual([expect.objectContaining({ code: 'too_small', path: ['list'] })]);
    const record = z.object({ big: z.array(z.number()), map: z.record(z.string().regex(/^k/), z.number()) });
    const key = explainWithoutWhole(record, { big, map: { k1: 1, x: 2 } });
    expect(key).toEqual([expect.objectContaining({ code: 'invalid_key', path: ['map', 'x'] })]);
    const refined = z.object({ a: z.number() }).refine(() => false, 'never');
    for (const inner of [refined, z.object({ a: z.number() }).catchall(z.string()).refine(() => false, 'never')]) {
      const schema = z.object({ big: z.array(z.number()), inner });
      const issues = explainWithoutWhole(schema, { big, inner: { a: 1, extra: 'text' } });
      expect(issues).toEqual([expect.objectContaining({ code: 'custom', path: ['inner'], message: 'never' })]);
    }
  });

  it('an object where a scalar belongs is named there', () => {
    const schema = z.object({ big: z.array(z.number()), name: z.string() });
    const issues = explainWithoutWhole(schema, { big: numbers(3000), name: { a: 1 } });
    expect(issues).toEqual([expect.objectContaining({ code: 'invalid_type', path: ['name'] })]);
  });
});

describe('explainRejection of a large value', () => {
  it('finds the bad element of an array at its index', () => {
    const schema = z.object({ list: z.array(z.number()) });
    const issues = explainRejection(schema, { list: [...numbers(3000), 'bad', 'worse'] });
    expect(paths(issues)).toEqual([['list', 3000]]);
    expect(issues?.[0]?.code).toBe('invalid_type');
  });

  it('finds the bad value of a record by its key', () => {
    const schema = z.object({ users: z.record(z.string(), z.object({ id: z.number() })) });
    const users = Object.fromEntries(numbers(3000).map((i) => [`u${i}`, { id: i }]));
    users.u2500 = { id: 'nope' as never };
    expect(paths(explainRejection(schema, { users }))).toEqual([['users', 'u2500', 'id']]);
  });

  it('names a missing required field, passing over optional ones that are absent', () => {
    const schema = z.object({ big: z.array(z.number()), maybe: z.string().optional(), needed: z.string() });
    const issues = explainRejection(schema, { big: numbers(3000) });
    expect(paths(issues)).toEqual([['needed']]);
  });

  it('finds an extra field that the catchall rejects, not one it accepts', () => {
    const schema = z.object({ big: z.array(z.number()) }).catchall(z.string());
    const issues = explainRejection(schema, { big: numbers(3000), fine: 'text', wrong: 5 });
    expect(paths(issues)).toEqual([['wrong']]);
  });

  it('looks through optional and nullable wrappers', () => {
    const optional = z.object({ list: z.array(z.number()).optional() });
    expect(paths(explainRejection(optional, { list: [...numbers(3000), 'x'] }))).toEqual([['list', 3000]]);
    const nullable = z.object({ list: z.array(z.number()).nullable() });
    expect(paths(explainRejection(nullable, { list: [...numbers(3000), 'x'] }))).toEqual([['list', 3000]]);
  });

  it('explains a union on a sample, with the path from the root', () => {
    const schema = z.object({ big: z.array(z.number()), either: z.union([z.string(), z.number()]) });
    const issues = explainRejection(schema, { big: numbers(3000), either: { no: true } });
    expect(paths(issues)).toEqual([['either']]);
    expect(issues?.[0]?.code).toBe('invalid_union');
  });

  it('a union whose sample leaves the bad element out is reported at the union, as invalid input', () => {
    const schema = z.object({ either: z.union([z.array(z.number()), z.string()]) });
    const issues = explainRejection(schema, { either: [...numbers(3000), 'bad'] });
    expect(issues).toEqual([expect.objectContaining({ code: 'custom', path: ['either'], message: 'Invalid input' })]);
  });

  it('a union whose sample keeps the bad element is explained by zod', () => {
    const schema = z.object({ big: z.array(z.number()), either: z.union([z.array(z.number()), z.string()]) });
    const issues = explainRejection(schema, { big: numbers(3000), either: [1, 'bad'] });
    expect(issues?.[0]).toMatchObject({ code: 'invalid_union', path: ['either'] });
  });

  it('accepts what zod accepts after all (should the compiled validator ever reject it)', () => {
    const schema = z.object({ scores: z.record(z.string(), z.number()), list: z.array(z.number()).optional() });
    const scores = Object.fromEntries(numbers(3000).map((i) => [`k${i}`, i]));
    expect(explainRejection(schema, { scores })).toBeUndefined();
    expect(explainRejection(schema, { scores: { a: 1 } })).toBeUndefined();
    // A list of four is sampled whole: nothing was left out, so zod's acceptance stands.
    expect(explainRejection(schema, { scores, list: [1, 2, 3, 4] })).toBeUndefined();
  });
});

describe('explainRejection of a small value', () => {
  it('keeps every issue up to the cap, in zod order', () => {
    const schema = z.object({ list: z.array(z.number()) });
    const issues = explainRejection(schema, { list: Array.from({ length: 30 }, () => 'x') });
    expect(issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(paths(issues)).toEqual(numbers(MAX_REPORTED_ISSUES).map((i) => ['list', i]));
  });

  it('a string counts as one value, however long', () => {
    // Explained whole, both problems named; were its characters counted, the value would be walked (one).
    const schema = z.object({ text: z.string(), a: z.number(), b: z.number() });
    const issues = explainRejection(schema, { text: 'x'.repeat(5000), a: 'no', b: 'no' });
    expect(paths(issues)).toEqual([['a'], ['b']]);
  });

  it('a value of exactly 2 000 values is explained whole; one more is walked', () => {
    // Whole: zod names every bad element (up to the cap). Walked: only the first rejected part.
    const schema = z.object({ list: z.array(z.number()) });
    // The object, the array and its elements: 2 + n values.
    const whole = explainRejection(schema, { list: [...numbers(1996), 'a', 'b'] });
    expect(paths(whole)).toEqual([
      ['list', 1996],
      ['list', 1997],
    ]);
    const walked = explainRejection(schema, { list: [...numbers(1997), 'a', 'b'] });
    expect(paths(walked)).toEqual([['list', 1997]]);
  });
});

describe('explainRejection of a part the walk cannot descend, on a bounded sample', () => {
  /** Runs explainRejection and returns, with its issues, what the union was asked to judge. */
  function explainUnion(union: z.ZodType, value: Record<string, unknown>) {
    const schema = z.object({ either: union });
    const judged = vi.spyOn(union, 'safeParse');
    const issues = explainWithoutWhole(schema, { either: value });
    const samples = judged.mock.calls.map(([sampled]) => sampled as Record<string, unknown>);
    judged.mockRestore();
    return { issues, samples };
  }
  const entries = (count: number, make: (i: number) => unknown) => Object.fromEntries(numbers(count).map((i) => [`k${i}`, make(i)]));

  it('copies at most 1 000 containers; the rest are left empty and the union reported as invalid input', () => {
    // Records are not cut like arrays: 2 500 arrays in one would all be copied without the budget.
    const union = z.union([z.record(z.string(), z.array(z.number())), z.string()]);
    const value = entries(2500, (i) => [i]);
    value.k2499 = ['bad'];
    const { issues, samples } = explainUnion(union, value);
    expect(samples).toHaveLength(1);
    const copied = Object.values(samples[0] as Record<string, unknown[]>);
    expect(copied).toHaveLength(2500);
    // The record itself is the first container: 999 arrays copied, then empty ones.
    expect(copied.filter((list) => list.length > 0)).toHaveLength(999);
    expect(copied[998]).toEqual([998]);
    expect(copied[999]).toEqual([]);
    expect(issues).toEqual([expect.objectContaining({ code: 'custom', path: ['either'], message: 'Invalid input' })]);
  });

  it('objects past the budget are left as empty objects, not arrays', () => {
    const union = z.union([z.record(z.string(), z.object({ n: z.number().optional() })), z.string()]);
    const value = entries(2500, (i) => ({ n: i }));
    value.k2499 = { n: 'bad' };
    const { issues, samples } = explainUnion(union, value);
    const copied = Object.values(samples[0] as Record<string, object>);
    expect(copied[999]).toEqual({});
    expect(issues).toEqual([expect.objectContaining({ code: 'custom', path: ['either'] })]);
  });

  it('a sampled part with many problems is reported by its first ten, under the path from the root', () => {
    // An intersection is explained whole (on a sample): zod names each of its twelve bad fields.
    const fields = Object.fromEntries(numbers(12).map((i) => [`f${i}`, z.string()]));
    const schema = z.object({ big: z.array(z.number()), both: z.intersection(z.object(fields), z.object({})) });
    const bad = Object.fromEntries(numbers(12).map((i) => [`f${i}`, i]));
    const issues = explainWithoutWhole(schema, { big: numbers(3000), both: bad });
    expect(issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(paths(issues)).toEqual(numbers(MAX_REPORTED_ISSUES).map((i) => ['both', `f${i}`]));
  });
});
