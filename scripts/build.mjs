// `npm run build`: dist/ holds the package as ES modules, dist/cjs/ the same files as CommonJS, each with
// its declarations. Both trees cover every file of src/ and adapters/, so every entry of package.json's
// `exports` (scripts/exports.mjs) exists in both. CommonJS is compiled, not wrapped: Node 20 before 20.19
// cannot require() an ES module.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cjsPath, entryPoints } from './exports.mjs';

const root = new URL('../', import.meta.url);
const tsc = new URL('node_modules/.bin/tsc', root).pathname;
const compile = (project) => execFileSync(tsc, ['-p', project], { cwd: root, stdio: 'inherit' });

rmSync(new URL('dist', root), { recursive: true, force: true });
compile('tsconfig.build.json');
compile('tsconfig.cjs.json');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
// Files under dist/cjs/ are CommonJS whatever the package's "type" says.
writeFileSync(new URL('dist/cjs/package.json', root), '{ "type": "commonjs" }\n');
fixCommonJs(new URL('dist/cjs/', root));
copyAssets(new URL('src/', root), ['dist/src/', 'dist/cjs/src/']);

/** Files the code reads beside itself (the Redis inbox's .lua scripts), which tsc does not emit: into both trees. */
function copyAssets(dir, trees) {
  for (const file of readdirSync(dir, { recursive: true })) {
    if (!String(file).endsWith('.lua')) continue;
    for (const tree of trees) {
      const target = new URL(`${tree}${String(file).split(sep).join('/')}`, root);
      mkdirSync(new URL('./', target), { recursive: true });
      copyFileSync(new URL(String(file), dir), target);
    }
  }
}

/**
 * Two things tsc leaves as written in CommonJS output:
 * - The CommonJS files' package scope is dist/cjs/package.json, where a package's `imports` would be ignored
 *   (publint), so their `require("#platform")` is written as the relative path to Node's side: the CommonJS
 *   build is what Node's `require` loads; bundlers for Workers and browsers take the ES modules.
 * - `import.meta.url`, a syntax error in CommonJS, becomes the URL of the file's `__filename`.
 */
function fixCommonJs(dir) {
  const platform = new URL('src/platform/node.js', dir);
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const text = readFileSync(file, 'utf8');
    let fixed = text.replaceAll('import.meta.url', 'require("node:url").pathToFileURL(__filename).href');
    if (fixed.includes('require("#platform")')) {
      let path = relative(dirname(file), fileURLToPath(platform)).split(sep).join('/');
      if (!path.startsWith('.')) path = `./${path}`;
      fixed = fixed.replaceAll('require("#platform")', `require(${JSON.stringify(path)})`);
    }
    if (fixed.includes('import.meta')) throw new Error(`${file}: import.meta other than import.meta.url has no CommonJS form here.`);
    if (fixed !== text) writeFileSync(file, fixed);
  }
}

const missing = entryPoints(pkg)
  .flatMap(([, esm]) => [esm, cjsPath(esm)])
  .filter((file) => !existsSync(new URL(file, root)));
if (missing.length) {
  console.error(`package.json exports names files the build did not emit: ${missing.join(', ')}`);
  process.exit(1);
}

// The CLI is a command, not an import path: its declarations would ship for nothing.
const cli = new URL('dist/src/cli/', root);
if (existsSync(cli)) {
  for (const file of readdirSync(cli, { recursive: true })) if (String(file).endsWith('.d.ts')) rmSync(new URL(String(file), cli));
}
