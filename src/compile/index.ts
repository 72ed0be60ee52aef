/**
 * A yes/no validator derived from a zod schema, for the happy path of parsing. zod's `safeParse` builds an
 * output value and issue objects that parsing throws away; on the 1 KB message_sent that costs about two
 * thirds of `JSON.parse`'s own time. The compiled function only answers "would zod accept this?", and must
 * answer exactly as zod does: test/receive/compile.test.ts checks that property-based. Whatever it does not
 * model (checks, formats, transforms, other kinds) makes it throw at compile time or, on request, is left to
 * zod for that sub-schema (`unsupported: 'zod'`); it is never approximated.
 *
 * It reads zod v4's internal definitions (`schema._zod.def`), mirroring zod/v4/core/schemas.js; a zod
 * upgrade that changes those semantics shows up as failing properties, not as silent drift.
 */
import { z } from 'zod';
import { closures } from './closures.js';
import { codegen, moduleSource } from './codegen.js';
import type { Validator } from './runtime.js';
import { analyse, type Schema } from './tree.js';

export type { Validator } from './runtime.js';
export { UnsupportedSchemaError } from './tree.js';

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
  const node = analyse(schema, options.unsupported); // 'throw' unless 'zod'
  const generate = options.mode === undefined ? canEval() : options.mode === 'codegen';
  return generate ? codegen(node) : closures(node);
}

/**
 * `compileValidator`'s generated code as module source (scripts/generate.mjs writes it for every trigger into
 * src/events/generated/validators.ts): `export function <name>(v)` per schema, sharing equal functions. It calls
 * `isPlainObject` and `hasEnumerableSymbol`, which the module imports from src/events/validation.ts.
 */
export function validatorsSource(schemas: ReadonlyArray<readonly [name: string, schema: Schema]>): string {
  return moduleSource(schemas.map(([name, schema]) => [name, analyse(schema, 'throw')] as const));
}
