/**
 * Closures: one function per node, for runtimes without `new Function`. Property reads use variable keys,
 * which V8 cannot specialise as well as the literal `v.uid` reads of generated code.
 */
import { hasEnumerableSymbol, isPlainObject, zodJudge, type Validator } from './runtime.js';
import { definedPart, type ArrayNode, type Node, type ObjectNode, type RecordNode } from './tree.js';

type Of = (node: Node) => Validator;

export function closures(root: Node): Validator {
  const made = new Map<Node, Validator>();
  const of: Of = (node) => {
    let fn = made.get(node);
    if (!fn) made.set(node, (fn = make(node, of)));
    return fn;
  };
  return of(root);
}

function make(node: Node, of: Of): Validator {
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
    case 'zod':
      return zodJudge(node.schema);
    default:
      return makeComposite(node, of);
  }
}

function makeComposite(node: Exclude<Node, { kind: 'any' | 'never' | 'string' | 'number' | 'boolean' | 'null' | 'undefined' | 'literal' | 'zod' }>, of: Of): Validator {
  switch (node.kind) {
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
    case 'array':
      return arrayValidator(node, of);
    case 'record':
      return recordValidator(node, of);
    case 'object':
      return objectValidator(node, of);
  }
}

function arrayValidator(node: ArrayNode, of: Of): Validator {
  const element = of(node.element);
  return (v) => {
    if (!Array.isArray(v)) return false;
    // An index loop, not every(): zod checks holes too, as undefined.
    for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
    return true;
  };
}

function recordValidator(node: RecordNode, of: Of): Validator {
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

function objectValidator(node: ObjectNode, of: Of): Validator {
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
