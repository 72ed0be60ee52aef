// `npm run docs`: the API reference from the TSDoc comments, into docs/api/ (not committed). One page per
// entry of package.json's `exports`, read from the sources behind them. typedoc runs from scripts/typedoc/
// with its own TypeScript 5 (it needs the compiler's JavaScript API, which TypeScript 7 lacks); that folder
// is installed on first use. Warnings (a broken {@link}, an exported type left out) fail the run, and so does
// a public function whose TSDoc has no `@example` (read from typedoc's JSON output).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entryPoints } from './exports.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const tool = fileURLToPath(new URL('typedoc/', import.meta.url));
if (!existsSync(`${tool}node_modules/.bin/typedoc`)) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tool, stdio: 'inherit' });
}

const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const sources = entryPoints(pkg).map(([, esm]) => esm.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
const scratch = mkdtempSync(join(tmpdir(), 'chat-webhooks-docs-'));
const json = join(scratch, 'api.json');
try {
  execFileSync(
    `${tool}node_modules/.bin/typedoc`,
    [...sources.flatMap((source) => ['--entryPoints', source]), '--options', 'typedoc.json', '--json', json, ...process.argv.slice(2)],
    { cwd: root, stdio: 'inherit' },
  );
  const missing = functionsWithoutExample(JSON.parse(readFileSync(json, 'utf8')));
  if (missing.length > 0) {
    console.error(`Public functions whose TSDoc has no @example:\n${missing.map((name) => `  ${name}`).join('\n')}`);
    process.exitCode = 1;
  }
} catch (error) {
  // typedoc has said what went wrong.
  process.exitCode = error.status ?? 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

/** `entry: name (file:line)` of every exported function none of whose signatures has an `@example` block. */
function functionsWithoutExample(reflection, entry = '') {
  const FUNCTION = 64;
  const MODULE = 2;
  const here = reflection.kind === MODULE ? reflection.name : entry;
  const own = [];
  if (reflection.kind === FUNCTION) {
    const documented = (reflection.signatures ?? []).some((signature) => (signature.comment?.blockTags ?? []).some((tag) => tag.tag === '@example'));
    const source = reflection.sources?.[0];
    if (!documented) own.push(`${here}: ${reflection.name} (${source?.fileName}:${source?.line})`);
  }
  return [...own, ...(reflection.children ?? []).flatMap((child) => functionsWithoutExample(child, here))];
}
