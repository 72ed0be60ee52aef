/**
 * The count check leaves V8's optimizing compiler out of its instructions (bench/lib/callgrind.mjs,
 * `optimizingCompilerCost`): part of that compiling starts by the clock, and a count that held it counted 14 %
 * more a request. Checked on a small dump in callgrind's format, read by callgrind_annotate as the check reads
 * a real one: what is subtracted is the compiler's inclusive cost, once, and nothing else.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain JavaScript modules without types.
import { optimizingCompilerCost, readDump } from '../../bench/lib/callgrind.mjs';

const COMPILE = 'v8::internal::Runtime_CompileOptimized(int, unsigned long*, v8::internal::Isolate*)';
const OSR = 'v8::internal::Runtime_CompileOptimizedOSR(int, unsigned long*, v8::internal::Isolate*)';
let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

/** A dump of `main` calling what `calls` names, each costing what it says, inclusive; `main` itself costs 10. */
function dump(calls: Record<string, number>): string {
  dir = mkdtempSync(join(tmpdir(), 'compiler-cost-'));
  const total = 10 + Object.values(calls).reduce((sum, cost) => sum + cost, 0);
  const lines = ['version: 1', 'creator: test', 'pid: 1', 'cmd: node', 'part: 1', '', 'events: Ir', `summary: ${total}`, '', 'fl=???', 'fn=main', '1 10'];
  for (const [name, cost] of Object.entries(calls)) lines.push(`cfl=???`, `cfn=${name}`, 'calls=1 1', `1 ${cost}`);
  for (const [name, cost] of Object.entries(calls)) lines.push('', 'fl=???', `fn=${name}`, `1 ${cost}`);
  writeFileSync(join(dir, 'callgrind.1.1'), `${lines.join('\n')}\n`);
  return dir;
}

describe("the count check's compiler cost", () => {
  it('is the inclusive cost of the runtime calls that enter the optimizing compiler', () => {
    const at = dump({ [COMPILE]: 300, [OSR]: 45, Builtins_JSEntry: 645 });
    expect(readDump(at, 'test').Ir).toBe(1000);
    expect(optimizingCompilerCost(at)).toBe(345);
  });

  it('is nothing when the compiler did not run', () => {
    expect(optimizingCompilerCost(dump({ Builtins_JSEntry: 645, 'v8::internal::Heap::Scavenge()': 200 }))).toBe(0);
  });
});
