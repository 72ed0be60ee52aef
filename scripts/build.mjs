// `npm run build`: dist/ holds the package as ES modules, dist/cjs/ the same files as CommonJS, each with
// its declarations. Both trees cover every file of src/ and adapters/, so every entry of package.json's
// `exports` (scripts/exports.mjs) exists in both. CommonJS is compiled, not wrapped: Node 20 before 20.19
// cannot require() an ES module.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cjsPath, entryPoints } from './exports.mjs';

const root = new URL('../', import.meta.url);
const tsc = new URL('node_modules/.bin/tsc', root).pathname;
const compile = (project) => execFileSync(tsc, ['-p', project], { cwd: root, stdio: 'inherit' });

rmSync(new URL('dist', root), { recursive: true, force: true });
compile('tsconfig.build.json');
compile('tsconfig.cjs.json');
// Files under dist/cjs/ are CommonJS whatever the package's "type" says.
writeFileSync(new URL('dist/cjs/package.json', root), '{ "type": "commonjs" }\n');

const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
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
