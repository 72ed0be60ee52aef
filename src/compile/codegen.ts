/**
 * Codegen: objects, arrays and records become named functions, everything else an inline expression.
 * Generated code reads properties by literal name (`v.uid`), which V8 specialises.
 */
import { hasEnumerableSymbol, isPlainObject, zodJudge, type Validator } from './runtime.js';
import { definedPart, UnsupportedSchemaError, type ArrayNode, type Field, type Node, type ObjectNode, type RecordNode } from './tree.js';

export function codegen(root: Node): Validator {
  const generator = new Generator();
  const entry = generator.test(root, 'v');
  const source = `"use strict";\n${generator.functions.join('\n')}\nreturn function validate(v) { return ${entry}; };`;
  const factory = new Function('c', 'isPlainObject', 'hasEnumerableSymbol', source);
  return factory(generator.constants, isPlainObject, hasEnumerableSymbol);
}

/**
 * The same code as `codegen`, as module source for scripts/generate.mjs: one validator per entry, `export function
 * <name>(v)`, over functions `f0`… and constants `c[…]` (Sets of literal values and known keys, written out) that
 * equal sub-schemas share across validators, as they do within one. Sub-schemas left to zod have no source form.
 */
export function moduleSource(entries: ReadonlyArray<readonly [name: string, root: Node]>): string {
  const generator = new Generator(true);
  const validators = entries.map(([name, root]) => `export function ${name}(v: any): boolean {\n  return ${generator.test(root, 'v')};\n}`);
  const constants = generator.constants.map((value) => `\n  ${setSource(value)},`).join('');
  return [
    // A tuple, so that tsc knows each `c[i]` is there (noUncheckedIndexedAccess).
    `const c = [${constants}\n] as const;`,
    ...generator.functions.map((text) =>
      text.replace(/^function ([\w$]+)\(v\)/, 'function $1(v: any): boolean').replace('const k = keys[i];', 'const k = keys[i]!;'),
    ),
    ...validators,
  ].join('\n');
}

/** A constant of generated code as source: only Sets of JSON-like literals have one. */
function setSource(value: unknown): string {
  if (!(value instanceof Set)) throw new UnsupportedSchemaError('a sub-schema left to zod has no generated form');
  const items = [...value].map((item) => {
    if (item === undefined) return 'undefined';
    if (typeof item === 'string' || typeof item === 'boolean' || item === null || (typeof item === 'number' && Number.isFinite(item) && !Object.is(item, -0))) {
      return JSON.stringify(item);
    }
    throw new UnsupportedSchemaError(`the literal ${String(item)} has no generated form`);
  });
  return `new Set<unknown>([${items.join(', ')}])`;
}

class Generator {
  readonly functions: string[] = [];
  readonly constants: unknown[] = [];
  readonly #names = new Map<Node, string>();
  readonly #bodies = new Map<string, string>();

  readonly #shared = new Map<string, number>();

  /** `share`: equal Sets of strings are one constant (module source), so that equal bodies are one function. */
  constructor(private readonly share = false) {}

  #constant(value: unknown): string {
    if (this.share && value instanceof Set) {
      const key = JSON.stringify([...value].map((item) => [typeof item, item]));
      let index = this.#shared.get(key);
      if (index === undefined) this.#shared.set(key, (index = this.constants.push(value) - 1));
      return `c[${index}]`;
    }
    return `c[${this.constants.push(value) - 1}]`;
  }

  #prop(key: string | symbol): string {
    if (typeof key === 'symbol') return `[${this.#constant(key)}]`;
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }

  /** An expression that is true when `x` (an identifier) is valid. */
  test(node: Node, x: string): string {
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
      case 'literal':
        // zod's own test (a Set): NaN, bigints and undefined need no special case, and a chain of === was no faster.
        return `${this.#constant(new Set(node.values))}.has(${x})`;
      case 'optional':
        return `(${x} === undefined || ${this.test(node.inner, x)})`;
      case 'exactOptional':
        return this.test(node.inner, x);
      case 'nullable':
        return `(${x} === null || ${this.test(node.inner, x)})`;
      case 'nonoptional':
        return `(${x} !== undefined && ${this.test(node.inner, x)})`;
      case 'union':
        return `(${node.options.map((option) => this.test(option, x)).join(' || ')})`;
      case 'zod':
        return `${this.#constant(zodJudge(node.schema))}(${x})`;
      default:
        return `${this.#functionFor(node)}(${x})`;
    }
  }

  /** The name of the function checking an object, array or record; equal ones share one function. */
  #functionFor(node: ObjectNode | ArrayNode | RecordNode): string {
    let name = this.#names.get(node);
    if (name) return name;
    const body = node.kind === 'array' ? this.#arrayBody(node) : node.kind === 'record' ? this.#recordBody(node) : this.#objectBody(node);
    // Equal sub-schemas built twice (every `z.array(z.string())`) share one function.
    const text = body.join('\n  ');
    name = this.#bodies.get(text);
    if (!name) {
      name = `f${this.#bodies.size}`;
      this.#bodies.set(text, name);
      this.functions.push(`function ${name}(v) {\n  ${text}\n  return true;\n}`);
    }
    this.#names.set(node, name);
    return name;
  }

  #arrayBody(node: ArrayNode): string[] {
    const body = ['if (!Array.isArray(v)) return false;'];
    if (node.element.kind !== 'any') {
      body.push(`for (let i = 0; i < v.length; i++) { const x = v[i]; if (!(${this.test(node.element, 'x')})) return false; }`);
    }
    return body;
  }

  #recordBody(node: RecordNode): string[] {
    const body = ['if (!isPlainObject(v)) return false;'];
    if (!node.loose) body.push('if (hasEnumerableSymbol(v)) return false;');
    if (node.value.kind !== 'any') {
      body.push(
        'const keys = Object.keys(v);',
        'for (let i = 0; i < keys.length; i++) {',
        `  const k = keys[i]; if (k === "__proto__") continue; const x = v[k]; if (!(${this.test(node.value, 'x')})) return false;`,
        '}',
      );
    }
    return body;
  }

  #objectBody(node: ObjectNode): string[] {
    const body = ['if (typeof v !== "object" || v === null || Array.isArray(v)) return false;', 'let x;'];
    for (const field of node.fields) body.push(this.#fieldCheck(field));
    if (node.catchall) {
      const rest = node.strict
        ? 'return false;'
        : `if (k === "__proto__") continue; x = v[k]; if (!(${this.test(node.catchall, 'x')})) return false;`;
      body.push(`for (const k in v) { if (${this.#constant(node.known)}.has(k)) continue; ${rest} }`);
    }
    return body;
  }

  #fieldCheck(field: Field): string {
    const key = typeof field.key === 'symbol' ? this.#constant(field.key) : JSON.stringify(field.key);
    // zod's verdict on an undefined value depends on presence only when the two differ.
    const undefinedOk =
      field.undefinedOk === field.absentOk ? String(field.undefinedOk) : `${field.undefinedOk ? '' : '!'}(${key} in v)`;
    const check = this.test(definedPart(field.node), 'x');
    // A constant `!true`/`!false` is folded away by the JIT.
    return `x = v${this.#prop(field.key)}; if (x === undefined ? !${undefinedOk} : !(${check})) return false;`;
  }
}
