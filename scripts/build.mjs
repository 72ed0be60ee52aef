// `npm run build`: dist/ holds the package as ES modules, dist/cjs/ the same files as CommonJS, each with
// its declarations. Both trees cover every file of src/ and adapters/, so every entry of package.json's
// `exports` (scripts/exports.mjs) exists in both. CommonJS is compiled, not wrapped: Node 20 before 20.19
// cannot require() an ES module.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cjsPath, entryPoints } from './exports.mjs';

const root = new URL('../', import.meta.url);
const tsc = new URL('node_modules/.bin/tsc', root).pathname;
const compile = (project) => execFileSync(tsc, ['-p', project], { cwd: root, stdio: 'inherit' });

rmSync(new URL('dist', root), { recursive: true, force: true });
compile('tsconfig.build.json');
compile('tsconfig.cjs.json');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
// Files under dist/cjs/ are CommonJS whatever the package's "type" says. That package.json is their package
// scope, so it carries the package's `imports` too (#platform), pointing at the CommonJS twins.
writeFileSync(new URL('dist/cjs/package.json', root), `${JSON.stringify({ type: 'commonjs', imports: cjsImports(pkg.imports ?? {}) }, null, 2)}\n`);

/** The `imports` map as seen from dist/cjs/: ./dist/x.js becomes ./x.js; the sources' condition is dropped. */
function cjsImports(imports) {
  const twin = (target) => (typeof target === 'string' ? target.replace(/^\.\/dist\//, './') : undefined);
  return Object.fromEntries(
    Object.entries(imports).map(([name, conditions]) => [
      name,
      Object.fromEntries(
        Object.entries(conditions)
          .filter(([condition]) => condition !== 'chat-webhooks-source')
          .map(([condition, target]) => [condition, twin(target)]),
      ),
    ]),
  );
}
const missing = entryPoints(pkg)
  .flatMap(([, esm]) => [esm, cjsPath(esm)])
  .filter((file) => !existsSync(new URL(file, root)));
if (missing.length) {
  console.error(`package.json exports names files the build did not emit: ${missing.join(', ')}`);
  process.exit(1);
}
