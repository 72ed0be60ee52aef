/**
 * fast-check arbitraries derived from the registry's zod schemas, so property tests build valid events of
 * every shape the schemas allow (optional fields present or not, each member of a union, open sets with
 * values nobody listed), not just the fixtures.
 */
import fc from 'fast-check';
import type { z } from 'zod';

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  element?: z.ZodType;
  values?: unknown[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** JSON-safe numbers: no NaN, no ±Infinity, no -0 (JSON writes it as 0). */
const number = fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => (Object.is(value, -0) ? 0 : value));
const key = fc.string({ minLength: 1, maxLength: 12 });

export function arbitraryOf(schema: z.ZodType): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return fc.string({ maxLength: 20 });
    case 'number':
      return number;
    case 'boolean':
      return fc.boolean();
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'unknown':
    case 'any':
      return fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)));
    case 'optional':
    case 'nonoptional':
      return arbitraryOf(def.innerType as z.ZodType);
    case 'union':
      return fc.oneof(...(def.options as z.ZodType[]).map(arbitraryOf));
    case 'array':
      return fc.array(arbitraryOf(def.element as z.ZodType), { maxLength: 3 });
    case 'record':
      return fc.dictionary(key, arbitraryOf(def.valueType as z.ZodType), { maxKeys: 3 });
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const entries = Object.fromEntries(Object.entries(shape).map(([name, field]) => [name, arbitraryOf(field)]));
      const requiredKeys = Object.keys(shape).filter((name) => defOf(shape[name] as z.ZodType).type !== 'optional');
      // An extra field the spec does not list, as the real service sends.
      const extra = fc.option(fc.record({ extraFieldFromTheFuture: fc.string({ maxLength: 5 }) }), { nil: undefined });
      return fc
        .tuple(fc.record(entries, { requiredKeys }), extra)
        .map(([value, more]) => (more ? { ...value, ...more } : value));
    }
    default:
      throw new Error(`no arbitrary for zod type "${def.type}"`);
  }
}
