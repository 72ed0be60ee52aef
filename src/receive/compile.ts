/**
 * A yes/no validator derived from a zod schema, for the happy path of parsing. zod's `safeParse` builds an
 * output value and issue objects that parsing throws away; on the 1 KB message_sent that costs about two
 * thirds of `JSON.parse`'s own time. The compiled function only answers "would zod accept this?", and must
 * answer exactly as zod does: test/compile.test.ts checks that property-based. Whatever it does not model
 * (checks, formats, transforms, other kinds) makes it throw at compile time or, on request, is left to zod
 * for that sub-schema (`unsupported: 'zod'`); it is never approximated.
 *
 * It reads zod v4's internal definitions (`schema._zod.def`), mirroring zod/v4/core/schemas.js; a zod
 * upgrade that changes those semantics shows up as failing properties, not as silent drift.
 */
import { z } from 'zod';

export type Validator = (value: unknown) => boolean;

export interface CompileOptions {
  /** A kind or check the compiler does not model: throw (default), or let zod's `safeParse` judge that sub-schema. */
  unsupported?: 'throw' | 'zod';
  /**
   * Generated code reads properties by literal name (`v.uid`), which V8 specialises: ~60 ns for a message_sent
   * event against ~2 µs for closures, whose variable-key reads go megamorphic. Closures are for runtimes
   * without `new Function` (Cloudflare Workers, strict CSP), where they still beat zod's own jitless path
   * ~3x. Default: codegen when allowed.
   */
  mode?: 'codegen' | 'closures';
}

export class UnsupportedSchemaError extends Error {
  override name = 'UnsupportedSchemaError';
}

type Schema = z.core.$ZodType;

/** The parts of zod's internals read here (see `$ZodObject`, `$ZodRecord`, … in zod/v4/core/schemas.js). */
interface Internals {
  def: Record<string, unknown> & { type: string };
  traits: Set<string>;
  optin?: 'optional' | 'defaulted';
  optout?: 'optional';
}
const internals = (schema: Schema) => (schema as unknown as { _zod: Internals })._zod;

/**
 * Definition keys each kind may carry. Any other key (a format, coercion, a discriminator, …) means semantics
 * not modelled here.
 */
const allowedKeys: Record<string, readonly string[]> = {
  string: [],
  number: [],
  boolean: [],
  null: [],
  undefined: [],
  unknown: [],
  any: [],
  never: [],
  literal: ['values'],
  optional: ['innerType'],
  nullable: ['innerType'],
  nonoptional: ['innerType'],
  union: ['options'],
  object: ['shape', 'catchall'],
  // `partial` only changes records whose key schema enumerates keys, which a plain z.string() does not.
  record: ['keyType', 'valueType', 'mode', 'partial'],
  array: ['element'],
};

interface Field {
  key: string | symbol;
  node: Node;
  /** Verdict for a present key holding `undefined`, and for an absent key (zod's `handlePropertyResult`). */
  undefinedOk: boolean;
  absentOk: boolean;
}

type Node =
  | { kind: 'any' | 'never' | 'string' | 'number' | 'boolean' | 'null' | 'undefined' }
  | { kind: 'literal'; values: readonly unknown[] }
  | { kind: 'optional' | 'exactOptional' | 'nullable' | 'nonoptional'; inner: Node }
  | { kind: 'union'; options: Node[] }
  | { kind: 'object'; fields: Field[]; catchall?: Node; strict: boolean; known: Set<string> }
  | { kind: 'record'; value: Node; loose: boolean }
  | { kind: 'array'; element: Node }
  | { kind: 'zod'; schema: Schema };

/** Whether zod's output for a valid input may differ from the input, which a `nonoptional` parent looks at. */
function mayRewrite(node: Node): boolean {
  switch (node.kind) {
    case 'zod':
      return true;
    case 'optional':
    case 'exactOptional':
    case 'nullable':
    case 'nonoptional':
      return mayRewrite(node.inner);
    case 'union':
      return node.options.some(mayRewrite);
    default:
      return false;
  }
}

function analyse(root: Schema, unsupported: 'throw' | 'zod'): Node {
  const seen = new Map<Schema, Node>();
  const building = new Set<Schema>();

  function visit(schema: Schema, path: string): Node {
    const done = seen.get(schema);
    if (done) return done;
    if (building.has(schema)) {
      throw new UnsupportedSchemaError(`${path || '(root)'}: recursive schemas are not supported`);
    }
    building.add(schema);
    let node: Node;
    try {
      node = build(schema, path);
    } catch (error) {
      if (unsupported === 'throw' || !(error instanceof UnsupportedSchemaError)) throw error;
      node = { kind: 'zod', schema };
    }
    building.delete(schema);
    seen.set(schema, node);
    return node;
  }

  function build(schema: Schema, path: string): Node {
    const { def, traits } = internals(schema);
    const where = path || '(root)';
    const allowed = allowedKeys[def.type];
    if (!allowed) throw new UnsupportedSchemaError(`${where}: schema kind "${def.type}" is not supported`);
    // A string format or number format is its own check (`$ZodCheck` trait) rather than an entry in `checks`.
    if (traits.has('$ZodCheck') || (Array.isArray(def.checks) && def.checks.length > 0)) {
      throw new UnsupportedSchemaError(`${where}: checks and refinements are not supported`);
    }
    for (const key of Object.keys(def)) {
      if (key !== 'type' && key !== 'checks' && key !== 'error' && !allowed.includes(key)) {
        throw new UnsupportedSchemaError(`${where}: "${def.type}" with "${key}" is not supported`);
      }
    }
    switch (def.type) {
      case 'literal':
        return { kind: 'literal', values: def.values as unknown[] };
      case 'optional':
      case 'nullable':
      case 'nonoptional': {
        const inner = visit(def.innerType as Schema, path);
        if (def.type === 'nonoptional' && mayRewrite(inner)) {
          throw new UnsupportedSchemaError(`${where}: nonoptional over a schema zod judges alone`);
        }
        // exactOptional shares the "optional" type but does not take undefined itself.
        const kind = traits.has('$ZodExactOptional') ? 'exactOptional' : def.type;
        return { kind, inner };
      }
      case 'union':
        return { kind: 'union', options: (def.options as Schema[]).map((option) => visit(option, path)) };
      case 'array':
        return { kind: 'array', element: visit(def.element as Schema, `${path}[]`) };
      case 'record': {
        const keyDef = internals(def.keyType as Schema).def;
        // Every string key passes a plain z.string(); other key schemas bring zod's numeric-key retry and enum keys.
        if (keyDef.type !== 'string' || Object.keys(keyDef).some((key) => key !== 'type' && key !== 'error')) {
          throw new UnsupportedSchemaError(`${where}: record keys other than z.string() are not supported`);
        }
        if (def.mode !== undefined && def.mode !== 'loose') {
          throw new UnsupportedSchemaError(`${where}: record mode "${String(def.mode)}" is not supported`);
        }
        return { kind: 'record', value: visit(def.valueType as Schema, `${path}.*`), loose: def.mode === 'loose' };
      }
      case 'object': {
        const shape = def.shape as Record<string | symbol, Schema>;
        const fields: Field[] = [];
        for (const key of [...Object.keys(shape), ...Object.getOwnPropertySymbols(shape)]) {
          // zod skips a declared __proto__ entirely.
          if (key === '__proto__') continue;
          const field = shape[key] as Schema;
          const { optin, optout } = internals(field);
          const undefinedOk = z.safeParse(field, undefined).success;
          const absentOk = undefinedOk ? optin !== undefined : optin !== undefined && optout === 'optional';
          fields.push({ key, node: visit(field, `${path}.${String(key)}`), undefinedOk, absentOk });
        }
        const catchall = def.catchall === undefined ? undefined : visit(def.catchall as Schema, `${path}.*`);
        return {
          kind: 'object',
          fields,
          // Unknown keys pass untouched unless a catchall judges them; z.unknown()/z.any() accept all.
          catchall: catchall && catchall.kind !== 'any' ? catchall : undefined,
          strict: catchall?.kind === 'never',
          known: new Set(Object.keys(shape)),
        };
      }
      case 'unknown':
      case 'any':
        return { kind: 'any' };
      default:
        return { kind: def.type as 'string' };
    }
  }

  return visit(root, '');
}

/** zod's `util.isPlainObject`, which records require. */
function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const ctor = (value as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prototype: unknown = ctor.prototype;
  if (typeof prototype !== 'object' || prototype === null || Array.isArray(prototype)) return false;
  return Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf');
}

/** A plain z.string() key schema rejects symbol keys; zod reads only enumerable own keys. */
function hasEnumerableSymbol(value: object): boolean {
  const symbols = Object.getOwnPropertySymbols(value);
  for (let i = 0; i < symbols.length; i++) {
    if (Object.prototype.propertyIsEnumerable.call(value, symbols[i]!)) return true;
  }
  return false;
}

const zodJudge = (schema: Schema): Validator => (value) => z.safeParse(schema, value).success;

// ---------------------------------------------------------------------------------------------------------
// Closures: one function per node. Property reads use variable keys, which V8 cannot specialise as well as
// the literal `v.uid` reads of generated code.

function closures(root: Node): Validator {
  const made = new Map<Node, Validator>();
  const of = (node: Node): Validator => {
    let fn = made.get(node);
    if (!fn) made.set(node, (fn = make(node)));
    return fn;
  };

  function make(node: Node): Validator {
    switch (node.kind) {
      case 'any':
        return () => true;
      case 'never':
        return () => false;
      case 'string':
        return (v) => typeof v === 'string';
      case 'number':
        return (v) => Number.isFinite(v);
      case 'boolean':
        return (v) => typeof v === 'boolean';
      case 'null':
        return (v) => v === null;
      case 'undefined':
        return (v) => v === undefined;
      case 'literal': {
        const values = new Set(node.values);
        return (v) => values.has(v);
      }
      case 'optional': {
        const inner = of(node.inner);
        return (v) => v === undefined || inner(v);
      }
      case 'exactOptional':
        return of(node.inner);
      case 'nullable': {
        const inner = of(node.inner);
        return (v) => v === null || inner(v);
      }
      case 'nonoptional': {
        const inner = of(node.inner);
        return (v) => v !== undefined && inner(v);
      }
      case 'union': {
        const options = node.options.map(of);
        return (v) => options.some((option) => option(v));
      }
      case 'array': {
        const element = of(node.element);
        return (v) => {
          if (!Array.isArray(v)) return false;
          // An index loop, not every(): zod checks holes too, as undefined.
          for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
          return true;
        };
      }
      case 'record': {
        const value = of(node.value);
        const any = node.value.kind === 'any';
        const loose = node.loose;
        return (v) => {
          if (!isPlainObject(v)) return false;
          const record = v as Record<string, unknown>;
          if (!loose && hasEnumerableSymbol(record)) return false;
          if (any) return true;
          const keys = Object.keys(record);
          for (let i = 0; i < keys.length; i++) {
            const key = keys[i] as string;
            if (key !== '__proto__' && !value(record[key])) return false;
          }
          return true;
        };
      }
      case 'object': {
        const fields = node.fields.map((field) => ({ ...field, check: of(definedPart(field.node)) }));
        const { known, strict } = node;
        const catchall = node.catchall && of(node.catchall);
        return (v) => {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
          const object = v as Record<string | symbol, unknown>;
          for (let i = 0; i < fields.length; i++) {
            const field = fields[i]!;
            const x = object[field.key];
            if (x === undefined) {
              if (!(field.key in object ? field.undefinedOk : field.absentOk)) return false;
            } else if (!field.check(x)) return false;
          }
          if (catchall) {
            for (const key in object) {
              if (known.has(key)) continue;
              if (strict) return false;
              if (key !== '__proto__' && !catchall(object[key])) return false;
            }
          }
          return true;
        };
      }
      case 'zod':
        return zodJudge(node.schema);
    }
  }

  return of(root);
}

// ---------------------------------------------------------------------------------------------------------
// Codegen: objects, arrays and records become named functions, everything else an inline expression.

function codegen(root: Node): Validator {
  const names = new Map<Node, string>();
  const bodies = new Map<string, string>();
  const functions: string[] = [];
  const constants: unknown[] = [];
  const constant = (value: unknown) => `c[${constants.push(value) - 1}]`;
  const prop = (key: string | symbol) =>
    typeof key === 'symbol'
      ? `[${constant(key)}]`
      : /^[A-Za-z_$][\w$]*$/.test(key)
        ? `.${key}`
        : `[${JSON.stringify(key)}]`;

  /** An expression that is true when `x` (an identifier) is valid. */
  function test(node: Node, x: string): string {
    switch (node.kind) {
      case 'any':
        return 'true';
      case 'never':
        return 'false';
      case 'string':
      case 'boolean':
        return `typeof ${x} === "${node.kind}"`;
      case 'number':
        return `Number.isFinite(${x})`;
      case 'null':
        return `${x} === null`;
      case 'undefined':
        return `${x} === undefined`;
      case 'literal': {
        const simple = node.values.every(
          (value) => typeof value === 'string' || typeof value === 'boolean' || value === null || Number.isFinite(value),
        );
        if (!simple || node.values.length === 0) return `${constant(new Set(node.values))}.has(${x})`;
        return `(${node.values.map((value) => `${x} === ${JSON.stringify(value)}`).join(' || ')})`;
      }
      case 'optional':
        return `(${x} === undefined || ${test(node.inner, x)})`;
      case 'exactOptional':
        return test(node.inner, x);
      case 'nullable':
        return `(${x} === null || ${test(node.inner, x)})`;
      case 'nonoptional':
        return `(${x} !== undefined && ${test(node.inner, x)})`;
      case 'union':
        return `(${node.options.map((option) => test(option, x)).join(' || ')})`;
      case 'zod':
        return `${constant(zodJudge(node.schema))}(${x})`;
      default:
        return `${functionFor(node)}(${x})`;
    }
  }

  function functionFor(node: Node & { kind: 'object' | 'array' | 'record' }): string {
    let name = names.get(node);
    if (name) return name;
    const body: string[] = [];
    if (node.kind === 'array') {
      body.push('if (!Array.isArray(v)) return false;');
      if (node.element.kind !== 'any') {
        body.push(
          `for (let i = 0; i < v.length; i++) { const x = v[i]; if (!(${test(node.element, 'x')})) return false; }`,
        );
      }
    } else if (node.kind === 'record') {
      body.push('if (!isPlainObject(v)) return false;');
      if (!node.loose) body.push('if (hasEnumerableSymbol(v)) return false;');
      if (node.value.kind !== 'any') {
        body.push(
          'const keys = Object.keys(v);',
          'for (let i = 0; i < keys.length; i++) {',
          `  const k = keys[i]; if (k === "__proto__") continue; const x = v[k]; if (!(${test(node.value, 'x')})) return false;`,
          '}',
        );
      }
    } else {
      body.push('if (typeof v !== "object" || v === null || Array.isArray(v)) return false;', 'let x;');
      for (const field of node.fields) {
        const key = typeof field.key === 'symbol' ? constant(field.key) : JSON.stringify(field.key);
        // zod's verdict on an undefined value depends on presence only when the two differ.
        const undefinedOk =
          field.undefinedOk === field.absentOk ? String(field.undefinedOk) : `${field.undefinedOk ? '' : '!'}(${key} in v)`;
        const check = test(definedPart(field.node), 'x');
        const fail =
          undefinedOk === 'true'
            ? `x !== undefined && !(${check})`
            : undefinedOk === 'false'
              ? `x === undefined || !(${check})`
              : `x === undefined ? !${undefinedOk} : !(${check})`;
        body.push(`x = v${prop(field.key)}; if (${fail}) return false;`);
      }
      if (node.catchall) {
        const rest = node.strict
          ? 'return false;'
          : `if (k === "__proto__") continue; x = v[k]; if (!(${test(node.catchall, 'x')})) return false;`;
        body.push(`for (const k in v) { if (${constant(node.known)}.has(k)) continue; ${rest} }`);
      }
    }
    // Equal sub-schemas built twice (every `z.array(z.string())`) share one function.
    const text = body.join('\n  ');
    name = bodies.get(text);
    if (!name) {
      name = `f${bodies.size}`;
      bodies.set(text, name);
      functions.push(`function ${name}(v) {\n  ${text}\n  return true;\n}`);
    }
    names.set(node, name);
    return name;
  }

  const entry = test(root, 'v');
  const source = `"use strict";\n${functions.join('\n')}\nreturn function validate(v) { return ${entry}; };`;
  const factory = new Function('c', 'isPlainObject', 'hasEnumerableSymbol', source);
  return factory(constants, isPlainObject, hasEnumerableSymbol);
}

/** The check that remains once a field's value is known not to be undefined. */
const definedPart = (node: Node): Node => (node.kind === 'optional' ? definedPart(node.inner) : node);

let evalAllowed: boolean | undefined;
function canEval(): boolean {
  // zod's own switch for environments that must not even try eval (a CSP reports the attempt).
  if (z.config().jitless) return false;
  if (evalAllowed === undefined) {
    try {
      // Cloudflare Workers and strict CSPs forbid it; zod probes the same way.
      evalAllowed = new Function('return true')() === true;
    } catch {
      evalAllowed = false;
    }
  }
  return evalAllowed;
}

/** A function telling whether zod would accept a value under `schema`, without building zod's output. */
export function compileValidator(schema: Schema, options: CompileOptions = {}): Validator {
  const node = analyse(schema, options.unsupported ?? 'throw');
  const mode = options.mode ?? (canEval() ? 'codegen' : 'closures');
  return mode === 'codegen' ? codegen(node) : closures(node);
}
