/**
 * zod's explanation of a rejected event, at a bounded cost. zod reports every bad element: a 1 MiB
 * message_sent whose `tags` are 500 000 zeros makes 500 000 issues, seconds of work and ~500 MB of heap. The
 * compiled validator already knows the event failed; here it also finds where: from the root, the first
 * child it rejects, then that child's first rejected child, and so on (children before it pass, so the walk
 * costs at most the body's size times its depth). zod then explains only the innermost rejected part, and
 * its issues get the path from the root.
 */
import type { z } from 'zod';
import { compileValidator, type Validator } from '../../compile/index.js';

/** Issues kept per rejection: enough to act on, few enough that their cost does not grow with the body. */
export const MAX_REPORTED_ISSUES = 10;
/** Elements kept per array when a union or an unmodelled schema must be explained whole. */
const SAMPLE_LENGTH = 4;
/** Values copied at most into such a sample. */
const SAMPLE_BUDGET = 1_000;
/** Up to this many values (every object, array and scalar counts), zod explains the whole event. */
const SMALL_VALUES = 2_000;

type Schema = z.core.$ZodType;
type Issue = z.core.$ZodIssue;
type Key = string | number;
interface Definition {
  type: string;
  innerType?: Schema;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  element?: Schema;
  valueType?: Schema;
}

const definitionOf = (schema: Schema) => (schema as unknown as { _zod: { def: Definition } })._zod.def;
const takesAbsence = (schema: Schema) => (schema as unknown as { _zod: { optin?: string } })._zod.optin !== undefined;

const validators = new WeakMap<Schema, Validator>();
function compiled(schema: Schema): Validator {
  const valid = compileValidator(schema, { unsupported: 'zod' });
  validators.set(schema, valid);
  return valid;
}
const accepts = (schema: Schema, value: unknown): boolean => (validators.get(schema) ?? compiled(schema))(value);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The first child of `value` that its schema rejects: its key, schema and value. (zod always gives an array
 * its `element`, a record its `valueType` and an object its `shape`.)
 */
function firstRejectedChild(definition: Definition, value: unknown): [Key, Schema, unknown] | undefined {
  const { type, catchall } = definition;
  if (type === 'array' && Array.isArray(value)) {
    const element = definition.element as Schema;
    const index = value.findIndex((item) => !accepts(element, item));
    return index === -1 ? undefined : [index, element, value[index]];
  }
  if (!isPlainObject(value)) return undefined;
  if (type === 'record') {
    const valueType = definition.valueType as Schema;
    const key = Object.keys(value).find((name) => !accepts(valueType, value[name]));
    return key === undefined ? undefined : [key, valueType, value[key]];
  }
  if (type !== 'object') return undefined;
  const shape = definition.shape as Record<string, Schema>;
  for (const key of Object.keys(shape)) {
    const field = shape[key] as Schema;
    const absent = !Object.hasOwn(value, key);
    if (absent ? !takesAbsence(field) : !accepts(field, value[key])) return [key, field, value[key]];
  }
  if (!catchall) return undefined;
  const extra = Object.keys(value).find((key) => !Object.hasOwn(shape, key) && !accepts(catchall, value[key]));
  return extra === undefined ? undefined : [extra, catchall, value[extra]];
}

/** The innermost rejected part of a value its schema rejects, and the path to it. */
function locate(schema: Schema, value: unknown): { schema: Schema; value: unknown; path: Key[] } {
  const path: Key[] = [];
  for (;;) {
    const definition = definitionOf(schema);
    const { type } = definition;
    // Wrappers rejected a value their inner schema rejects (undefined and null they would have taken).
    if (type === 'optional' || type === 'nullable' || type === 'nonoptional') {
      schema = definition.innerType as Schema;
      continue;
    }
    const child = firstRejectedChild(definition, value);
    if (!child) return { schema, value, path };
    path.push(child[0]);
    schema = child[1];
    value = child[2];
  }
}

/** Whether `value` holds more values than the budget allows; stops counting once it does. */
function exceeds(value: unknown, budget: { left: number }): boolean {
  if (--budget.left < 0) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((child) => exceeds(child, budget));
  // null gets here too, and has no keys to visit.
  for (const key in value) if (exceeds((value as Record<string, unknown>)[key], budget)) return true;
  return false;
}

interface Budget {
  left: number;
  /** Whether anything was left out. */
  cut: boolean;
}

/** A copy with arrays cut to a few elements, for explaining a part the walk cannot descend (a union). */
function sample(value: unknown, budget: Budget): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (budget.left-- <= 0) {
    budget.cut = true;
    return Array.isArray(value) ? [] : {};
  }
  if (Array.isArray(value)) {
    if (value.length > SAMPLE_LENGTH) budget.cut = true;
    return value.slice(0, SAMPLE_LENGTH).map((item) => sample(item, budget));
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = sample((value as Record<string, unknown>)[key], budget);
  return copy;
}

/**
 * The first few of zod's issues for a value the compiled validator rejected, or undefined when zod, the
 * authority, accepts it after all.
 */
export function explainRejection(schema: z.ZodType, value: unknown): Issue[] | undefined {
  // Small enough that zod's full explanation is cheap: it names every problem, not just the first.
  if (!exceeds(value, { left: SMALL_VALUES })) return explainWhole(schema, value);
  const part = locate(schema, value);
  const budget: Budget = { left: SAMPLE_BUDGET, cut: false };
  const result = (part.schema as z.ZodType).safeParse(sample(part.value, budget));
  if (!result.success) {
    return result.error.issues
      .slice(0, MAX_REPORTED_ISSUES)
      .map((issue) => ({ ...issue, path: [...part.path, ...issue.path] }) as Issue);
  }
  if (budget.cut) {
    // The sample left out the bad element; judging the whole part could cost what this module avoids.
    return [{ code: 'custom', path: part.path, message: 'Invalid input', input: undefined } as unknown as Issue];
  }
  // zod accepts what the compiled validator rejected (test/receive/compile.test.ts says it never does): zod wins.
  return explainWhole(schema, value);
}

function explainWhole(schema: z.ZodType, value: unknown): Issue[] | undefined {
  const result = schema.safeParse(value);
  return result.success ? undefined : result.error.issues.slice(0, MAX_REPORTED_ISSUES);
}
