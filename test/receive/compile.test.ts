/**
 * The compiled validator must give zod's verdict, nothing more lenient and nothing stricter. zod is the
 * oracle throughout: every property compares both compiled forms (generated code and closures) with
 * `safeParse(…).success` on the same input.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { compileValidator, UnsupportedSchemaError, type Validator } from '../../src/compile/index.js';
import { triggers, type Trigger } from '../../src/events/registry.js';
import { eventSchemaOf } from '../../src/events/event-schema.js';
import { validators } from '../../src/events/generated/validators.js';

type Schema = z.core.$ZodType;

const fixture = (trigger: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${trigger}.json`, import.meta.url), 'utf8'));

function both(schema: Schema, options: { unsupported?: 'throw' | 'zod' } = {}) {
  return {
    codegen: compileValidator(schema, { ...options, mode: 'codegen' }),
    closures: compileValidator(schema, { ...options, mode: 'closures' }),
  };
}

/** Asserts that both compiled forms agree with zod on `value`; returns zod's verdict. */
function agree(schema: Schema, compiled: Record<string, Validator>, value: unknown): boolean {
  const expected = z.safeParse(schema, value).success;
  for (const [mode, valid] of Object.entries(compiled)) {
    if (valid(value) !== expected) {
      throw new Error(`${mode} says ${!expected}, zod says ${expected}, for ${describeValue(value)}`);
    }
  }
  return expected;
}

function describeValue(value: unknown): string {
  try {
    return fc.stringify(value);
  } catch {
    return String(value);
  }
}

/** Values JSON cannot carry but a pre-parsed body, or a careless caller, can. Fresh on every draw. */
const oddities: fc.Arbitrary<unknown> = fc.constantFrom(
  () => undefined,
  () => null,
  () => NaN,
  () => Infinity,
  () => -Infinity,
  () => -0,
  () => 1n,
  () => '',
  () => [],
  () => ({}),
  () => [, 'a'], // a hole
  () => new Date(0),
  () => new Map([['uid', 'x']]),
  () => Object.create(null) as object,
  () => Object.assign(Object.create(null) as object, { uid: 'x', guid: 'y', id: 'z' }),
  () => Object.create({ uid: 'inherited', id: 'inherited' }) as object,
  () => JSON.parse('{"__proto__": {"uid": 1}, "uid": "x"}') as unknown,
  () => ({ [Symbol('key')]: 1 }),
  () => Object.defineProperty({}, Symbol('hidden'), { value: 1, enumerable: false }),
  () => Symbol('value'),
  () => () => 'function',
).map((make) => make());

const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddities);

/** Every key any object schema declares, so added keys often hit a real field with a wrong value. */
function schemaKeys(schema: Schema, into = new Set<string>(), seen = new Set<Schema>()): Set<string> {
  if (seen.has(schema)) return into;
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const children: unknown[] = [def.innerType, def.element, def.valueType, def.catchall, ...((def.options as unknown[]) ?? [])];
  if (def.type === 'object') {
    for (const [key, child] of Object.entries(def.shape as Record<string, Schema>)) {
      into.add(key);
      children.push(child);
    }
  }
  for (const child of children) if (child) schemaKeys(child as Schema, into, seen);
  return into;
}

type Path = { parent: Record<string | number, unknown> | undefined; key: string | number; value: unknown };

/** Every node of a JSON-like tree, with where it hangs (the root has no parent). */
function nodes(root: unknown): Path[] {
  const out: Path[] = [];
  const walk = (value: unknown, parent: Path['parent'], key: string | number) => {
    out.push({ parent, key, value });
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, value as never, i));
    else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      for (const k of Object.keys(value)) walk((value as Record<string, unknown>)[k], value as never, k);
    }
  };
  walk(root, undefined, '');
  return out;
}

interface Mutation {
  kind: 'delete' | 'replace' | 'undefined' | 'addKey' | 'retype';
  at: number;
  key: string;
  value: unknown;
  retype: number;
}

/** Same information, another type: the mistakes senders actually make (a number as a string, one item unwrapped…). */
function retyped(value: unknown, which: number): unknown {
  let text: string;
  try {
    text = String(value);
  } catch {
    text = '[object]'; // a prototype-less object or a symbol in a template
  }
  const options: unknown[] = [
    typeof value === 'string' ? Number(value) : text,
    [value],
    { value },
    value === null ? {} : null,
    typeof value === 'number' ? `${value}` : 0,
    Array.isArray(value) ? Object.assign({}, value) : value && typeof value === 'object' ? Object.values(value) : true,
  ];
  return options[which % options.length];
}

function mutate(root: unknown, mutations: Mutation[]): unknown {
  for (const m of mutations) {
    const all = nodes(root);
    const target = all[m.at % all.length]!;
    const set = (value: unknown) => {
      if (target.parent) target.parent[target.key] = value;
      else root = value;
    };
    switch (m.kind) {
      case 'delete':
        if (Array.isArray(target.parent)) target.parent.splice(target.key as number, 1);
        else if (target.parent) delete target.parent[target.key];
        break;
      case 'replace':
        set(m.value);
        break;
      case 'undefined':
        set(undefined);
        break;
      case 'retype':
        set(retyped(target.value, m.retype));
        break;
      case 'addKey':
        if (target.value !== null && typeof target.value === 'object') {
          // An own `__proto__`, as JSON.parse makes it, not a prototype change.
          Object.defineProperty(target.value, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        }
        break;
    }
  }
  return root;
}

const compiledEvents = new Map<Trigger, { schema: Schema; compiled: Record<string, Validator>; keys: string[] }>();
function event(trigger: Trigger) {
  let entry = compiledEvents.get(trigger);
  if (!entry) {
    const schema = eventSchemaOf(trigger);
    // The validator the receive path runs, generated at build time (scripts/generate.mjs), beside the run-time ones.
    entry = { schema, compiled: { ...both(schema), generated: validators[trigger] }, keys: [...schemaKeys(schema)] };
    compiledEvents.set(trigger, entry);
  }
  return entry;
}

describe('compiled event validators agree with zod', () => {
  it.each(triggers)('%s: compiles without falling back to zod', (trigger) => {
    expect(() => compileValidator(eventSchemaOf(trigger))).not.toThrow();
  });

  it.each(triggers)('%s: the fixture is valid under both', (trigger) => {
    const { schema, compiled } = event(trigger);
    expect(agree(schema, compiled, fixture(trigger))).toBe(true);
  });

  it.each(triggers)('%s: arbitrary JSON values and objects', (trigger) => {
    const { schema, compiled, keys } = event(trigger);
    const value = fc.oneof(
      anyValue,
      fc.object({ key: fc.constantFrom(...keys), maxDepth: 2, values: [fc.jsonValue({ maxDepth: 1 }), oddities] }),
      // An envelope that passes the first gate, with arbitrary data.
      fc.record({ trigger: fc.constant(trigger), data: fc.object({ key: fc.constantFrom(...keys), maxDepth: 3 }) }),
    );
    fc.assert(fc.property(value, (v) => void agree(schema, compiled, v)), { numRuns: 40 });
  });

  it.each(triggers)('%s: mutations of the fixture', (trigger) => {
    const { schema, compiled, keys } = event(trigger);
    const original = fixture(trigger);
    const mutation: fc.Arbitrary<Mutation> = fc.record({
      kind: fc.constantFrom('delete', 'replace', 'undefined', 'addKey', 'retype'),
      at: fc.nat(),
      key: fc.oneof(fc.constantFrom(...keys, '__proto__', 'constructor', 'toString'), fc.string({ maxLength: 4 })),
      value: anyValue,
      retype: fc.nat(),
    });
    const verdicts = { valid: 0, invalid: 0 };
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
        const value = mutate(structuredClone(original), mutations);
        verdicts[agree(schema, compiled, value) ? 'valid' : 'invalid']++;
      }),
      { numRuns: 150 },
    );
    // Both verdicts must have been exercised, or the property proves little.
    expect(verdicts.valid).toBeGreaterThan(0);
    expect(verdicts.invalid).toBeGreaterThan(0);
  });
});

describe('edge semantics, as zod has them', () => {
  const check = (schema: Schema, value: unknown, expected: boolean) => {
    expect(agree(schema, both(schema), value)).toBe(expected);
  };

  it('numbers: NaN and ±Infinity are rejected, -0 and strings of digits are not numbers', () => {
    const n = z.number();
    check(n, 1.5, true);
    check(n, -0, true);
    check(n, Number.MAX_VALUE, true);
    check(n, NaN, false);
    check(n, Infinity, false);
    check(n, -Infinity, false);
    check(n, '1', false);
    check(n, 1n, false);
    check(n, new Number(1), false);
  });

  it('optional keys may be absent or undefined; exactOptional ones only absent', () => {
    const optional = z.object({ a: z.string().optional() });
    check(optional, {}, true);
    check(optional, { a: undefined }, true);
    check(optional, { a: null }, false);
    const exact = z.object({ a: z.exactOptional(z.string()) });
    check(exact, {}, true);
    check(exact, { a: undefined }, false);
  });

  it('a required key whose schema accepts undefined must still be present', () => {
    for (const field of [z.unknown(), z.any(), z.undefined(), z.union([z.string(), z.undefined()]), z.literal(undefined)]) {
      const schema = z.object({ a: field });
      check(schema, {}, false);
      check(schema, { a: undefined }, true);
      // `in` sees inherited keys, as zod does.
      check(schema, Object.create({ a: undefined }), true);
    }
  });

  it('nonoptional (from .required()) rejects undefined however the inner schema is written', () => {
    const schema = z.object({ id: z.string(), name: z.string() }).partial().required({ id: true });
    check(schema, { id: 'x' }, true);
    check(schema, {}, false);
    check(schema, { id: undefined }, false);
  });

  it('objects ignore unknown keys; loose ones keep them; strict ones and catchalls judge them', () => {
    check(z.object({ a: z.string() }), { a: 'x', b: 1 }, true);
    check(z.looseObject({ a: z.string() }), { a: 'x', b: 1 }, true);
    check(z.strictObject({ a: z.string() }), { a: 'x', b: 1 }, false);
    check(z.strictObject({ a: z.string() }), { a: 'x' }, true);
    check(z.object({ a: z.string() }).catchall(z.number()), { a: 'x', b: 1 }, true);
    check(z.object({ a: z.string() }).catchall(z.number()), { a: 'x', b: '1' }, false);
  });

  it('null, arrays, class instances and prototype-less objects where an object is expected', () => {
    const object = z.object({ a: z.string().optional() });
    const record = z.record(z.string(), z.unknown());
    for (const schema of [object, record]) {
      check(schema, null, false);
      check(schema, undefined, false);
      check(schema, [], false);
      check(schema, 'a', false);
      check(schema, Object.create(null), true);
    }
    // An object takes any non-array object; a record wants a plain one.
    check(object, new Date(0), true);
    check(record, new Date(0), false);
    check(object, new Map(), true);
    check(record, new Map(), false);
    check(record, { constructor: 'not a function' }, true);
    check(z.array(z.string()), { 0: 'a', length: 1 }, false);
  });

  it("records: zod's plain-object test on odd constructors and prototypes", () => {
    const record = z.record(z.string(), z.unknown());
    // The constructor is inherited, so the record itself has no keys: only the plain-object test decides.
    const madeBy = (constructor: unknown) => Object.create({ constructor });
    const withPrototype = (prototype: unknown) => madeBy(Object.assign(function () {}, { prototype }));
    const owningIsPrototypeOf = <T extends object>(prototype: T) => Object.assign(prototype, { isPrototypeOf: () => false });
    check(record, madeBy(undefined), true);
    check(record, madeBy(() => 0), false); // an arrow function has no prototype
    check(record, withPrototype(null), false);
    check(record, withPrototype(5), false);
    check(record, withPrototype(owningIsPrototypeOf([])), false);
    check(record, withPrototype(owningIsPrototypeOf(function () {})), false);
    check(record, withPrototype(owningIsPrototypeOf({})), true);
    check(record, withPrototype({}), false);
  });

  it('__proto__: an own key is ignored by objects and records, but is unknown to strict objects', () => {
    const own = (value: unknown) => JSON.parse(`{"__proto__": ${JSON.stringify(value)}, "a": "x"}`);
    check(z.object({ a: z.string() }), own({ a: 1 }), true);
    check(z.strictObject({ a: z.string() }), own(1), false);
    check(z.record(z.string(), z.string()), own(1), true);
    check(z.record(z.string(), z.number()), own(1), false); // "a": "x" is still judged
    const declared = z.object({ ['__proto__']: z.string() } as Record<string, z.ZodType>);
    check(declared, {}, true);
    check(declared, own(1), true);
  });

  it('records: symbol keys fail z.string() unless non-enumerable or the record is loose', () => {
    const record = z.record(z.string(), z.number());
    check(record, { [Symbol('s')]: 1 }, false);
    check(record, Object.defineProperty({ a: 1 }, Symbol('s'), { value: 'x', enumerable: false }), true);
    check(z.looseRecord(z.string(), z.number()), { [Symbol('s')]: 1 }, true);
    check(record, { a: 1, b: NaN }, false);
    check(record, {}, true);
    check(record, { undefined: 1 }, true); // a key spelled "undefined" is no symbol
  });

  it('literals beyond JSON values: NaN, ±Infinity, bigints, undefined, none at all', () => {
    check(z.literal([NaN, 'a']), NaN, true);
    check(z.literal([NaN, 'a']), 'a', true);
    check(z.literal([NaN, 'a']), 'b', false);
    check(z.literal(Infinity), Infinity, true);
    check(z.literal(Infinity), null, false);
    check(z.literal(-Infinity), -Infinity, true);
    check(z.literal([5n, 'a']), 5n, true);
    check(z.literal([5n, 'a']), 5, false);
    check(z.literal([5n, 'a']), 'a', true);
    check(z.literal([undefined, 'a']), undefined, true);
    check(z.literal([undefined, 'a']), null, false);
    check(z.literal([true, null, 0]), false, false);
    check(z.literal([true, null, 0]), null, true);
    check(z.literal([true, null, 0]), -0, true);
    check(z.literal([]), undefined, false);
    check(z.literal([]), 'a', false);
  });

  it('keys that are no identifiers, and symbol keys', () => {
    const odd = z.object({ 'a-b': z.string(), '1a': z.number(), 'a-': z.boolean(), $b_1: z.string(), 'c d': z.null() });
    check(odd, { 'a-b': 'x', '1a': 1, 'a-': true, $b_1: 'y', 'c d': null }, true);
    check(odd, { 'a-b': 1, '1a': 1, 'a-': true, $b_1: 'y', 'c d': null }, false);
    check(odd, { 'a-b': 'x', '1a': 'x', 'a-': true, $b_1: 'y', 'c d': null }, false);
    check(odd, { 'a-b': 'x', '1a': 1, 'a-': 'x', $b_1: 'y', 'c d': null }, false);
    check(odd, { 'a-b': 'x', '1a': 1, 'a-': true, $b_1: 2, 'c d': null }, false);
    const symbol = Symbol('s');
    const keyed = z.object({ [symbol]: z.string(), s: z.number() });
    check(keyed, { [symbol]: 'x', s: 1 }, true);
    check(keyed, { [symbol]: 1, s: 1 }, false);
    check(keyed, { s: 1 }, false);
    check(keyed, { [symbol]: 'x', s: 'x' }, false);
    check(keyed, { [Symbol('s')]: 'x', s: 1 }, false);
    check(z.object({ [symbol]: z.string().optional() }), {}, true);
    // Present-but-undefined and absent differ here, so the key's presence is tested (`in`), by the symbol itself.
    const exact = z.object({ [symbol]: z.string().exactOptional() });
    check(exact, {}, true);
    check(exact, { [symbol]: undefined }, false);
    check(exact, { undefined: 'x' }, true);
  });

  it('equal sub-schemas share a function, and unequal ones never do', () => {
    const schema = z.object({ a: z.array(z.string()), b: z.array(z.string()), c: z.array(z.number()), d: z.array(z.string()) });
    check(schema, { a: ['x'], b: ['y'], c: [1], d: ['z'] }, true);
    check(schema, { a: ['x'], b: [1], c: [1], d: ['z'] }, false);
    check(schema, { a: ['x'], b: ['y'], c: ['x'], d: ['z'] }, false);
    check(schema, { a: ['x'], b: ['y'], c: [1], d: [1] }, false);
  });

  it('arrays: holes are judged as undefined', () => {
    // eslint-disable-next-line no-sparse-arrays
    const sparse = [, 'a'];
    check(z.array(z.string()), sparse, false);
    check(z.array(z.string().optional()), sparse, true);
    check(z.array(z.unknown()), sparse, true);
    check(z.array(z.string()), [], true);
  });

  it('literals, unions and nullables', () => {
    check(z.literal(['a', 1, true, null]), null, true);
    check(z.literal(['a', 1, true, null]), 'b', false);
    check(z.literal(0), -0, true);
    check(z.union([z.string(), z.number()]), true, false);
    check(z.union([z.string(), z.boolean()]), true, true);
    check(z.string().nullable(), null, true);
    check(z.string().nullable(), undefined, false);
    check(z.object({ a: z.string().nullable() }), { a: null }, true);
    check(z.object({ a: z.string().nullable().optional() }), { a: null }, true);
    check(z.object({}), {}, true);
  });

  it('throws on checks, refinements, coercion and kinds it does not model', () => {
    const unsupported: Schema[] = [
      z.string().min(1),
      z.email(),
      z.int(),
      z.number().positive(),
      z.coerce.number(),
      z.string().refine((s) => s.length > 0),
      z.object({ a: z.string() }).refine(() => true),
      z.string().transform((s) => s.length),
      z.string().default('x'),
      z.enum(['a', 'b']),
      z.discriminatedUnion('t', [z.object({ t: z.literal('a') })]),
      z.xor([z.string(), z.number()]),
      z.record(z.enum(['a']), z.string()),
      z.array(z.string()).min(1),
      z.object({ nested: z.object({ deep: z.string().max(3) }) }),
    ];
    for (const schema of unsupported) {
      expect(() => compileValidator(schema), describeValue(schema._zod.def.type)).toThrow(UnsupportedSchemaError);
    }
    type Node = z.ZodType;
    const recursive: z.ZodType = z.object({
      get next(): Node {
        return recursive.optional();
      },
    });
    expect(() => compileValidator(recursive)).toThrow(UnsupportedSchemaError);
  });

  it('says where the unsupported part is and what it is', () => {
    const refusal = (schema: Schema) => {
      try {
        compileValidator(schema);
      } catch (error) {
        expect(error).toBeInstanceOf(UnsupportedSchemaError);
        expect((error as Error).name).toBe('UnsupportedSchemaError');
        return (error as Error).message;
      }
      throw new Error('compiled');
    };
    expect(refusal(z.string().min(1))).toBe('(root): checks and refinements are not supported');
    expect(refusal(z.object({ a: z.array(z.number().positive()) }))).toBe('.a[]: checks and refinements are not supported');
    expect(refusal(z.record(z.string(), z.email()))).toBe('.*: checks and refinements are not supported');
    expect(refusal(z.object({ a: z.string() }).catchall(z.date()))).toBe('.*: schema kind "date" is not supported');
    expect(refusal(z.object({ d: z.date() }))).toBe('.d: schema kind "date" is not supported');
    expect(refusal(z.object({ u: z.discriminatedUnion('t', [z.object({ t: z.literal('a') })]) }))).toBe(
      '.u: "union" with "discriminator" is not supported',
    );
    expect(refusal(z.record(z.enum(['a']), z.string()))).toBe('(root): record keys other than z.string() are not supported');
    // A key schema whose definition has nothing but its type, yet is no string.
    expect(refusal(z.record(z.never() as unknown as z.ZodString, z.string()))).toBe('(root): record keys other than z.string() are not supported');
    expect(refusal(z.object({ r: z.record(z.string().min(1), z.string()) }))).toBe('.r: record keys other than z.string() are not supported');
    // zod's own API never builds another mode, but the definition allows "strict".
    const strict = new z.ZodRecord({ ...z.record(z.string(), z.string())._zod.def, mode: 'strict' });
    expect(refusal(strict)).toBe('(root): record mode "strict" is not supported');
    expect(refusal(z.object({ s: strict }))).toBe('.s: record mode "strict" is not supported');
    type Node = z.ZodType;
    const recursive: z.ZodType = z.object({
      get next(): Node {
        return recursive.optional();
      },
    });
    // A cycle always passes through a key, an element or a record value: its path is never the root.
    expect(refusal(recursive)).toBe('.next: recursive schemas are not supported');
  });

  it('a custom error message is no check: such schemas and record keys still compile', () => {
    const schema = z.object({ a: z.string({ error: 'a must be text' }), r: z.record(z.string({ error: 'bad key' }), z.number()) });
    const compiled = both(schema);
    expect(agree(schema, compiled, { a: 'x', r: { k: 1 } })).toBe(true);
    expect(agree(schema, compiled, { a: 1, r: {} })).toBe(false);
  });

  it('analyses a sub-schema used many times once (not once per path to it)', () => {
    let schema: z.ZodType = z.object({ leaf: z.string() });
    for (let level = 0; level < 40; level++) schema = z.object({ left: schema, right: schema });
    // 2^40 paths: only by reading each shared sub-schema once does this finish.
    const compiled = both(schema);
    expect(Object.values(compiled).every((valid) => valid(null) === false)).toBe(true);
  });

  it("under zod's jitless setting, builds closures without trying new Function", () => {
    const schema = z.object({ a: z.string(), b: z.array(z.number()).optional() });
    const original = globalThis.Function;
    z.config({ jitless: true });
    globalThis.Function = function () {
      throw new EvalError('Code generation from strings disallowed for this context');
    } as unknown as FunctionConstructor;
    try {
      const valid = compileValidator(schema);
      expect(valid({ a: 'x', b: [1] })).toBe(true);
      expect(valid({ a: 'x', b: [NaN] })).toBe(false);
    } finally {
      globalThis.Function = original;
      z.config({ jitless: false });
    }
  });

  // Generated code is the function `validate` of its source; closures are not.
  const generated = (valid: Validator) => String(valid).startsWith('function validate(v)');

  it('generates code by default where new Function works, and builds closures only when asked', () => {
    const schema = z.object({ a: z.string() });
    expect(generated(compileValidator(schema))).toBe(true);
    expect(generated(compileValidator(schema, { mode: 'codegen' }))).toBe(true);
    expect(generated(compileValidator(schema, { mode: 'closures' }))).toBe(false);
  });

  it('builds closures where new Function throws or does not run code, and probes only once', async () => {
    const schema = z.object({ a: z.string(), b: z.array(z.number()).optional() });
    const original = globalThis.Function;
    const refusing = vi.fn(function () {
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    // A stand-in that "succeeds" without running the source (a sandbox handing back a stub).
    const inert = vi.fn(function () {
      return () => undefined;
    });
    try {
      for (const [index, stub] of [refusing, inert].entries()) {
        // A fresh instance of this module alone (the probe's answer is kept per instance); its imports stay
        // loaded, so the other compiler modules' load-time code is not run again inside this test.
        const path = `../../src/compile/index.js?probe=${index}`;
        const fresh = (await import(/* @vite-ignore */ path)) as typeof import('../../src/compile/index.js');
        globalThis.Function = stub as unknown as FunctionConstructor;
        const valid = fresh.compileValidator(schema);
        fresh.compileValidator(schema);
        globalThis.Function = original;
        expect(stub).toHaveBeenCalledTimes(1);
        expect(generated(valid)).toBe(false);
        expect(valid({ a: 'x', b: [1] })).toBe(true);
        expect(valid({ a: 'x', b: [NaN] })).toBe(false);
      }
      // And a fresh instance that probes the real new Function generates code.
      const realPath = '../../src/compile/index.js?probe=real';
      const real = (await import(/* @vite-ignore */ realPath)) as typeof import('../../src/compile/index.js');
      expect(generated(real.compileValidator(schema))).toBe(true);
    } finally {
      globalThis.Function = original;
    }
  });

  it('hands zod only the parts it does not model, never a wrapper or a nonoptional over modelled ones', () => {
    const judged = (schema: z.ZodType) => vi.spyOn((schema as unknown as { _zod: { run: () => unknown } })._zod, 'run');
    const nonoptional = z.string().optional().nonoptional();
    const nullable = z.string().default('x').nullable();
    const spies = [judged(nonoptional), judged(nullable)];
    const schema = z.object({ a: nonoptional, b: nullable });
    const compiled = both(schema, { unsupported: 'zod' });
    for (const value of [{ a: 'x', b: null }, { a: 'x', b: 'y' }, { a: 'x' }, { b: 1 }]) agree(schema, compiled, value);
    // zod's own safeParse in agree() runs them through the object: count only the compiled validators' calls.
    spies.forEach((spy) => spy.mockClear());
    for (const value of [{ a: 'x', b: null }, { a: 'x', b: 'y' }, { a: 'x' }, { b: 1 }]) for (const valid of Object.values(compiled)) valid(value);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it("with unsupported: 'zod', a key optional going out but not in must still be present", () => {
    // (zod's types refuse an optional output after a required input; its runtime takes it.)
    const schema = z.object({ a: z.string().pipe(z.string().optional() as unknown as z.ZodString) });
    const compiled = both(schema, { unsupported: 'zod' });
    expect(agree(schema, compiled, {})).toBe(false);
    expect(agree(schema, compiled, { a: 'x' })).toBe(true);
  });

  it("with unsupported: 'zod', leaves those sub-schemas to zod and still agrees", () => {
    const field = (schema: z.ZodType, value: fc.Arbitrary<unknown>) => ({
      schema: z.object({ field: schema, plain: z.number().optional() }),
      value: fc.record({ field: value, plain: fc.oneof(fc.double(), anyValue) }, { requiredKeys: [] }),
    });
    const cases = [
      field(z.string().min(2), fc.oneof(fc.string({ maxLength: 3 }), anyValue)),
      field(z.int().optional(), fc.oneof(fc.integer(), fc.double(), anyValue)),
      field(z.array(z.email()).optional(), fc.oneof(fc.array(fc.constantFrom('a@example.com', 'nope')), anyValue)),
      field(z.string().default('x').nonoptional(), fc.oneof(fc.string(), fc.constant(undefined))),
      // Wrapped in another wrapper or a union, the default still fills undefined in before nonoptional looks.
      // (As array elements: an object field's own undefined handling would decide before them.)
      ...[
        z.string().default('x').optional(),
        z.string().default('x').nullable(),
        z.string().default('x').exactOptional(),
        z.string().default('x').nonoptional(),
        z.union([z.number(), z.string().default('x')]),
      ].map((wrapped) =>
        field(z.array(wrapped.nonoptional()), fc.array(fc.oneof(fc.string(), fc.double(), fc.constant(null), fc.constant(undefined)), { maxLength: 3 })),
      ),
      // zod fills undefined in before nonoptional looks, so that nonoptional must be left to zod too.
      field(z.array(z.string().default('x').nonoptional()), fc.array(fc.oneof(fc.string(), fc.constant(undefined)), { maxLength: 3 })),
      // Optional going in, not coming out: absence is an error although the key's schema takes undefined.
      field(z.string().optional().transform((s) => s).pipe(z.string()), fc.oneof(fc.string(), fc.constant(undefined))),
    ];
    for (const { schema, value } of cases) {
      const compiled = both(schema, { unsupported: 'zod' });
      const verdicts = { valid: 0, invalid: 0 };
      fc.assert(
        fc.property(value, (v) => void verdicts[agree(schema, compiled, v) ? 'valid' : 'invalid']++),
        { numRuns: 100 },
      );
      expect(verdicts.valid).toBeGreaterThan(0);
      expect(verdicts.invalid).toBeGreaterThan(0);
    }
  });
});

/**
 * Random schemas of every supported kind, each with values drawn mostly from its own shape (so they are
 * often valid) and sometimes from anywhere: the compiler against zod beyond the shapes the registry uses.
 */
describe('random schemas', () => {
  const key = fc.constantFrom('a', 'b', 'c', '0', '__proto__', 'constructor', 'toString');
  const leaf: fc.Arbitrary<Schema> = fc.constantFrom<() => Schema>(
    () => z.string(),
    () => z.number(),
    () => z.boolean(),
    () => z.null(),
    () => z.undefined(),
    () => z.unknown(),
    () => z.any(),
    () => z.never(),
    () => z.literal('a'),
    () => z.literal(['a', 1, true, null]),
  ).map((make) => make());
  const { schema } = fc.letrec<{ schema: Schema }>((tie) => ({
    schema: fc.oneof(
      { depthSize: 'small', maxDepth: 4 },
      leaf,
      tie('schema').map((s) => z.optional(s)),
      tie('schema').map((s) => z.exactOptional(s)),
      tie('schema').map((s) => z.nullable(s)),
      tie('schema').map((s) => z.nonoptional(s)),
      fc.array(tie('schema'), { minLength: 1, maxLength: 3 }).map((options) => z.union(options as [Schema, ...Schema[]])),
      tie('schema').map((s) => z.array(s)),
      fc.tuple(tie('schema'), fc.boolean()).map(([s, loose]) => (loose ? z.looseRecord(z.string(), s) : z.record(z.string(), s))),
      fc
        .tuple(fc.dictionary(key, tie('schema'), { maxKeys: 3 }), fc.constantFrom('strip', 'loose', 'strict', 'catchall'), tie('schema'))
        .map(([shape, mode, rest]) => {
          const object = z.object(shape as Record<string, z.ZodType>);
          return mode === 'strip' ? object : mode === 'loose' ? object.loose() : mode === 'strict' ? object.strict() : object.catchall(rest as z.ZodType);
        }),
    ),
  }));

  /** Values shaped like `s`, with some noise at every level. */
  function valueFor(s: Schema, depth = 0): fc.Arbitrary<unknown> {
    const def = (s as unknown as { _zod: { def: Record<string, any> } })._zod.def;
    const inner = (child: Schema) => valueFor(child, depth + 1);
    let shaped: fc.Arbitrary<unknown>;
    switch (def.type) {
      case 'string':
        shaped = fc.string({ maxLength: 2 });
        break;
      case 'number':
        shaped = fc.double();
        break;
      case 'boolean':
        shaped = fc.boolean();
        break;
      case 'literal':
        shaped = fc.constantFrom(...(def.values as unknown[]));
        break;
      case 'optional':
      case 'nullable':
      case 'nonoptional':
        shaped = fc.oneof(fc.constantFrom(undefined, null), inner(def.innerType));
        break;
      case 'union':
        shaped = fc.oneof(...(def.options as Schema[]).map(inner));
        break;
      case 'array':
        shaped = fc.oneof(fc.array(inner(def.element), { maxLength: 3 }), fc.sparseArray(inner(def.element), { maxLength: 3 }));
        break;
      case 'record':
        shaped = fc.dictionary(fc.oneof(key, fc.string({ maxLength: 2 })), inner(def.valueType), { maxKeys: 3 });
        break;
      case 'object': {
        const shape = def.shape as Record<string, Schema>;
        const fields = Object.fromEntries(Object.keys(shape).map((k) => [k, inner(shape[k]!)]));
        shaped = fc
          .tuple(fc.record(fields, { requiredKeys: [] }), fc.dictionary(key, anyValue, { maxKeys: 2 }))
          .map(([own, extra]) => Object.assign(Object.create(null), extra, own) as object)
          .chain((object) => fc.constantFrom(object, { ...object }, Object.assign(Object.create({ a: 'inherited' }), object)));
        break;
      }
      default:
        shaped = anyValue;
    }
    return depth > 4 ? anyValue : fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: anyValue });
  }

  it('agree with zod on values shaped like them', () => {
    const verdicts = { valid: 0, invalid: 0 };
    fc.assert(
      fc.property(
        schema.chain((s) => fc.tuple(fc.constant(s), fc.array(valueFor(s), { minLength: 1, maxLength: 6 }))),
        ([s, values]) => {
          const compiled = both(s);
          for (const value of values) verdicts[agree(s, compiled, value) ? 'valid' : 'invalid']++;
        },
      ),
      { numRuns: 3000 },
    );
    expect(verdicts.valid).toBeGreaterThan(100);
    expect(verdicts.invalid).toBeGreaterThan(100);
  });
});
