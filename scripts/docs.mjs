// `npm run docs`: the API reference from the TSDoc comments, into docs/api/ (not committed). One page per
// entry of package.json's `exports`, read from the sources behind them. typedoc runs from scripts/typedoc/
// with its own TypeScript 5 (it needs the compiler's JavaScript API, which TypeScript 7 lacks); that folder
// is installed on first use. Warnings (a broken {@link}, an exported type left out) fail the run.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { entryPoints } from './exports.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const tool = fileURLToPath(new URL('typedoc/', import.meta.url));
if (!existsSync(`${tool}node_modules/.bin/typedoc`)) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tool, stdio: 'inherit' });
}

const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const sources = entryPoints(pkg).map(([, esm]) => esm.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
try {
  execFileSync(
    `${tool}node_modules/.bin/typedoc`,
    [...sources.flatMap((source) => ['--entryPoints', source]), '--options', 'typedoc.json', ...process.argv.slice(2)],
    { cwd: root, stdio: 'inherit' },
  );
} catch (error) {
  // typedoc has said what went wrong.
  process.exit(error.status ?? 1);
}
