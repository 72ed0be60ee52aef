/**
 * The size of each public entry as a bundler ships it (issue 37, item 4): esbuild bundles `export * from` the
 * entry's built file, minified, ESM, peers external, split so that what loads only later (zod's explanation of
 * a rejection) is apart. Counted: the entry chunk and what it imports statically, gzipped. test/cold/entry-sizes.test.ts
 * fails when one grew more than 5 % past bench/results/entry-sizes.json; `node bench/entry-sizes.mjs` records it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

export async function entrySizes() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const scratch = mkdtempSync(join(tmpdir(), 'entry-sizes-'));
  const sizes = {};
  try {
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      const name = subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`;
      const outdir = join(scratch, String(Object.keys(sizes).length));
      const result = await build({
        stdin: { contents: `export * from ${JSON.stringify(target.import.default)};`, resolveDir: root, loader: 'js' },
        bundle: true, minify: true, format: 'esm', splitting: true, outdir, platform: 'node', write: true, metafile: true,
        external: Object.keys(pkg.peerDependencies), entryNames: 'entry', logLevel: 'silent',
      });
      const outputs = result.metafile.outputs;
      const eager = new Set();
      const visit = (file) => {
        if (eager.has(file)) return;
        eager.add(file);
        for (const imported of outputs[file].imports) if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
      };
      visit(Object.keys(outputs).find((file) => outputs[file].entryPoint));
      sizes[name] = [...eager].reduce((sum, file) => sum + gzipSync(readFileSync(join(root, file)), { level: 9 }).length, 0);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return sizes;
}
