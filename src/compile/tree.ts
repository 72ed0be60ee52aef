/**
 * The schema tree the validators are built from: zod's internal definitions (`schema._zod.def`, see
 * `$ZodObject`, `$ZodRecord`, … in zod/v4/core/schemas.js) read into plain nodes, with whatever is not
 * modelled refused (or, on request, left to zod for that sub-schema).
 */
import { z } from 'zod';

export type Schema = z.core.$ZodType;

export class UnsupportedSchemaError extends Error {
  override name = 'UnsupportedSchemaError';
}

/** The parts of zod's internals read here. */
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

export interface Field {
  key: string | symbol;
  node: Node;
  /** Verdict for a present key holding `undefined`, and for an absent key (zod's `handlePropertyResult`). */
  undefinedOk: boolean;
  absentOk: boolean;
}

export type ObjectNode = { kind: 'object'; fields: Field[]; catchall?: Node; strict: boolean; known: Set<string> };
export type RecordNode = { kind: 'record'; value: Node; loose: boolean };
export type ArrayNode = { kind: 'array'; element: Node };

export type Node =
  | { kind: 'any' | 'never' | 'string' | 'number' | 'boolean' | 'null' | 'undefined' }
  | { kind: 'literal'; values: readonly unknown[] }
  | { kind: 'optional' | 'exactOptional' | 'nullable' | 'nonoptional'; inner: Node }
  | { kind: 'union'; options: Node[] }
  | ObjectNode
  | RecordNode
  | ArrayNode
  | { kind: 'zod'; schema: Schema };

/** Whether zod's output for a valid input may differ from the input, which a `nonoptional` parent looks at. */
function mayRewrite(node: Node): boolean {
  switch (node.kind) {
    case 'zod':
      return true;
    case 'optional':
    case 'exactOptional':
    case 'nullable':
      return mayRewrite(node.inner);
    // A nonoptional node never holds a part that may rewrite: such a nonoptional is left to zod whole.
    case 'union':
      return node.options.some(mayRewrite);
    default:
      return false;
  }
}

/** The check that remains once a field's value is known not to be undefined. */
export function definedPart(node: Node): Node {
  while (node.kind === 'optional') node = node.inner;
  return node;
}

/** The tree of a schema. Each sub-schema is read once; a recursive one is refused. */
/** `unsupported`: anything but 'zod' (absent included) throws. */
export function analyse(root: Schema, unsupported: 'throw' | 'zod' | undefined): Node {
  return new Analyser(unsupported).visit(root, '');
}

class Analyser {
  readonly #seen = new Map<Schema, Node>();
  readonly #building = new Set<Schema>();

  constructor(private readonly unsupported: 'throw' | 'zod' | undefined) {}

  visit(schema: Schema, path: string): Node {
    const done = this.#seen.get(schema);
    if (done) return done;
    if (this.#building.has(schema)) {
      // A cycle passes through a key, an element or a record value: `path` is never the root's empty one.
      throw new UnsupportedSchemaError(`${path}: recursive schemas are not supported`);
    }
    this.#building.add(schema);
    let node: Node;
    try {
      node = this.#build(schema, path);
    } catch (error) {
      if (this.unsupported !== 'zod' || !(error instanceof UnsupportedSchemaError)) throw error;
      node = { kind: 'zod', schema };
    }
    this.#building.delete(schema);
    this.#seen.set(schema, node);
    return node;
  }

  #build(schema: Schema, path: string): Node {
    const { def, traits } = internals(schema);
    checkModelled(def, traits, path || '(root)');
    switch (def.type) {
      case 'literal':
        return { kind: 'literal', values: def.values as unknown[] };
      case 'optional':
      case 'nullable':
      case 'nonoptional':
        return this.#wrapper(schema, def, traits, path);
      case 'union':
        return { kind: 'union', options: (def.options as Schema[]).map((option) => this.visit(option, path)) };
      case 'array':
        return { kind: 'array', element: this.visit(def.element as Schema, `${path}[]`) };
      case 'record':
        return this.#record(def, path);
      case 'object':
        return this.#object(def, path);
      case 'unknown':
        return { kind: 'any' };
      default: // 'any' included
        return { kind: def.type as 'string' };
    }
  }

  #wrapper(schema: Schema, def: Internals['def'], traits: Set<string>, path: string): Node {
    const inner = this.visit(def.innerType as Schema, path);
    // zod's output may differ from the input there (a default filled in), which nonoptional judges: zod decides.
    // (Only reached with `unsupported: 'zod'`: in 'throw' mode, the inner schema has thrown already.)
    if (def.type === 'nonoptional' && mayRewrite(inner)) return { kind: 'zod', schema };
    // exactOptional shares the "optional" type but does not take undefined itself.
    const kind = traits.has('$ZodExactOptional') ? 'exactOptional' : (def.type as 'optional' | 'nullable' | 'nonoptional');
    return { kind, inner };
  }

  #record(def: Internals['def'], path: string): RecordNode {
    const where = path || '(root)';
    const keyDef = internals(def.keyType as Schema).def;
    // Every string key passes a plain z.string(); other key schemas bring zod's numeric-key retry and enum keys.
    if (keyDef.type !== 'string' || Object.keys(keyDef).some((key) => key !== 'type' && key !== 'error')) {
      throw new UnsupportedSchemaError(`${where}: record keys other than z.string() are not supported`);
    }
    if (def.mode !== undefined && def.mode !== 'loose') {
      throw new UnsupportedSchemaError(`${where}: record mode "${String(def.mode)}" is not supported`);
    }
    return { kind: 'record', value: this.visit(def.valueType as Schema, `${path}.*`), loose: def.mode === 'loose' };
  }

  #object(def: Internals['def'], path: string): ObjectNode {
    const shape = def.shape as Record<string | symbol, Schema>;
    const fields: Field[] = [];
    for (const key of [...Object.keys(shape), ...Object.getOwnPropertySymbols(shape)]) {
      // zod skips a declared __proto__ entirely.
      if (key === '__proto__') continue;
      const field = shape[key] as Schema;
      const { optin, optout } = internals(field);
      const undefinedOk = z.safeParse(field, undefined).success;
      const absentOk = undefinedOk ? optin !== undefined : optin !== undefined && optout === 'optional';
      fields.push({ key, node: this.visit(field, `${path}.${String(key)}`), undefinedOk, absentOk });
    }
    const catchall = def.catchall === undefined ? undefined : this.visit(def.catchall as Schema, `${path}.*`);
    return {
      kind: 'object',
      fields,
      // Unknown keys pass untouched unless a catchall judges them; z.unknown()/z.any() accept all.
      catchall: catchall?.kind === 'any' ? undefined : catchall,
      strict: catchall?.kind === 'never',
      known: new Set(Object.keys(shape)),
    };
  }
}

/** Refuses a kind, a check or a definition key the validators do not model. */
function checkModelled(def: Internals['def'], traits: Set<string>, where: string): void {
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
}
