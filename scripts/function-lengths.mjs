// Lists hand-written functions longer than a limit (default 80 lines) in src/ and adapters/; exits 1 if any.
// `node scripts/function-lengths.mjs [limit]`. Generated files (first line says so) are skipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseSync } from '@swc/core';

const limit = Number(process.argv[2] ?? 80);
const roots = ['src', 'adapters'];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'PrivateMethod', 'Constructor']);

function lineOf(starts, offset) {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

const long = [];
for (const root of roots) {
  for (const path of files(root)) {
    const text = readFileSync(path, 'utf8');
    if (/^\/\/ Generated/.test(text)) continue;
    const module = parseSync(text, { syntax: 'typescript', target: 'es2022' });
    // swc spans are byte offsets into a buffer shared by every parse: relative to the module's own start.
    const base = module.span.start - (text.length - text.trimStart().length);
    const bytes = Buffer.from(text);
    const starts = [0];
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts.push(i + 1);
    const visit = (node, name) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((child) => visit(child, name));
      let label = name;
      if (node.type === 'FunctionDeclaration') label = node.identifier?.value;
      if (node.type === 'VariableDeclarator' && node.id?.value) label = node.id.value;
      if ((node.type === 'ClassMethod' || node.type === 'PrivateMethod') && node.key) label = node.key.value ?? node.key.id?.value;
      if (FUNCTION_TYPES.has(node.type) && node.span) {
        const lines = lineOf(starts, node.span.end - base) - lineOf(starts, node.span.start - base) + 1;
        if (lines > limit) long.push({ path, name: label ?? '(anonymous)', line: lineOf(starts, node.span.start - base), lines });
      }
      for (const key of Object.keys(node)) if (key !== 'span') visit(node[key], label);
    };
    visit(module.body, undefined);
  }
}
for (const { path, name, line, lines } of long) console.log(`${path}:${line} ${name}: ${lines} lines`);
if (long.length) {
  console.log(`${long.length} function(s) longer than ${limit} lines`);
  process.exit(1);
}
console.log(`no hand-written function longer than ${limit} lines`);
