/**
 * `npm run bench:cold` (issue 37): what a Lambda or a Worker pays for chat-webhooks, side by side with
 * @octokit/webhooks, in one run. Writes bench/results/cold.md and cold.json.
 *  - bundle size: the minimal Lambda and fetch receivers (bench/cold/receivers.mjs) bundled by esbuild,
 *    minified, ESM, peers external, split so that what loads only on a rejection (zod) is its own chunk: the
 *    cold start loads the entry and its static imports, counted here gzipped;
 *  - cold start: import + first delivery, each in a fresh node, ours and octokit's interleaved, medians;
 *  - validation of a message_sent on workerd against Node, the same bundle;
 *  - `chat-webhooks --version` and `--help` against `node -e 0`, interleaved, medians.
 *   node bench/cold.mjs [--runs 15]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { receivers } from './cold/receivers.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const peers = Object.keys(pkg.peerDependencies);
const scratch = mkdtempSync(join(tmpdir(), 'cold-'));
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const round = (value, digits = 1) => Number(value.toFixed(digits));

/** Bundles a receiver: the entry and what it statically imports (the cold start's share), the lazy rest apart. */
async function bundle(name, contents, platform = 'node') {
  const outdir = join(scratch, name);
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'js', sourcefile: `${name}.mjs` },
    bundle: true, minify: true, format: 'esm', splitting: true, outdir, platform, write: true, metafile: true,
    external: peers, entryNames: 'entry', logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((file) => outputs[file].entryPoint);
  const eager = new Set();
  const visit = (file) => {
    if (eager.has(file)) return;
    eager.add(file);
    for (const imported of outputs[file].imports) if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
  };
  visit(entry);
  const size = (files) => files.reduce((sum, file) => {
    const text = readFileSync(join(root, file));
    return { bytes: sum.bytes + text.length, gzip: sum.gzip + gzipSync(text, { level: 9 }).length };
  }, { bytes: 0, gzip: 0 });
  const lazy = Object.keys(outputs).filter((file) => file.endsWith('.js') && !eager.has(file));
  return { entry: join(root, entry), eager: size([...eager]), lazy: size(lazy) };
}

function coldStarts(bundles) {
  const times = Object.fromEntries(Object.keys(bundles).map((name) => [name, { import: [], first: [], total: [] }]));
  for (let run = 0; run < runs; run++) {
    for (const [name, { entry, kind }] of Object.entries(bundles)) {
      const out = execFileSync(process.execPath, [join(root, 'bench/cold/child.mjs'), entry, kind], { encoding: 'utf8' });
      const { import: imported, first } = JSON.parse(out);
      times[name].import.push(imported);
      times[name].first.push(first);
      times[name].total.push(imported + first);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, t]) => [name, { import: round(median(t.import)), first: round(median(t.first)), total: round(median(t.total)) }]));
}

function wallTimes(commands) {
  const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let run = 0; run < runs; run++) {
    for (const [name, args] of Object.entries(commands)) {
      const start = process.hrtime.bigint();
      const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'ignore' });
      if (result.status !== 0) throw new Error(`${name} exited ${result.status}`);
      times[name].push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, list]) => [name, round(median(list))]));
}

async function validationCost() {
  const body = readFileSync(join(root, 'fixtures/message_sent.json'), 'utf8');
  const outfile = join(scratch, 'worker', 'worker.js');
  await build({
    entryPoints: [join(root, 'bench/cold/validate-worker.mjs')], bundle: true, minify: true, format: 'esm',
    platform: 'neutral', conditions: ['worker', 'browser'], mainFields: ['module', 'main'], outfile,
    define: { BODY: JSON.stringify(body) }, logLevel: 'silent',
  });
  const { nsPerValidation } = await import(outfile);
  const node = await nsPerValidation(body, 200_000);
  const workerd = join(root, 'tools/runtimes/node_modules/.bin/workerd');
  if (!existsSync(workerd)) return { node: round(node, 0), workerd: null, note: 'workerd not installed (npm run setup:runtimes)' };
  writeFileSync(join(scratch, 'worker', 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .worker) ] );
const worker :Workerd.Worker = ( modules = [ (name = "worker.js", esModule = embed "worker.js") ], compatibilityDate = "2026-07-01" );
`);
  const result = spawnSync(workerd, ['test', 'config.capnp'], { cwd: join(scratch, 'worker'), encoding: 'utf8' });
  const found = /VALIDATION_NS ([\d.]+)/.exec(`${result.stdout}${result.stderr}`);
  if (!found) throw new Error(`workerd printed no figure:\n${result.stdout}${result.stderr}`);
  return { node: round(node, 0), workerd: round(Number(found[1]), 0) };
}

const sizes = {};
const bundles = {};
for (const [name, contents] of Object.entries(receivers)) {
  const made = await bundle(name, contents);
  sizes[name] = { eager: made.eager, lazy: made.lazy };
  if (name !== 'ours-fetch') bundles[name] = { entry: made.entry, kind: name === 'octokit' ? 'octokit' : 'ours' };
}
const cold = coldStarts(bundles);
const validation = await validationCost();
const cli = join(root, 'dist/src/cli/index.js');
const cliTimes = wallTimes({ 'node -e 0': ['-e', '0'], '--version': [cli, '--version'], '--help': [cli, '--help'] });
rmSync(scratch, { recursive: true, force: true });

const results = { node: process.version, runs, sizes, cold, validation, cli: cliTimes };
writeFileSync(join(root, 'bench/results/cold.json'), `${JSON.stringify(results, null, 2)}\n`);
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const ratio = (a, b) => (b ? `${(a / b).toFixed(2)}×` : 'n/a');
const md = `# Cold start and bundle size (\`npm run bench:cold\`)

Node ${process.version}, ${runs} interleaved runs each, medians; a shared machine, so read the ratios more than the ms.

## Bundles (esbuild, minified, ESM, peers external, split)

| receiver | loaded at cold start | gzipped | loaded on the first rejection (gzipped) |
|---|---|---|---|
${Object.entries(sizes).map(([name, s]) => `| ${name} | ${kb(s.eager.bytes)} | ${kb(s.eager.gzip)} | ${s.lazy.bytes ? `${kb(s.lazy.bytes)} (${kb(s.lazy.gzip)})` : '-'} |`).join('\n')}

## Cold start: import + first delivery, fresh process

| receiver | import | first delivery | total | × octokit |
|---|---|---|---|---|
${Object.entries(cold).map(([name, t]) => `| ${name} | ${t.import} ms | ${t.first} ms | ${t.total} ms | ${ratio(t.total, cold.octokit.total)} |`).join('\n')}

## Validating a message_sent (safeParseWebhook of its text), per call

| Node | workerd | workerd ÷ Node |
|---|---|---|
| ${validation.node} ns | ${validation.workerd ?? validation.note} ns | ${ratio(validation.workerd, validation.node)} |

## CLI

| command | wall time | × \`node -e 0\` |
|---|---|---|
${Object.entries(cliTimes).map(([name, t]) => `| ${name} | ${t} ms | ${ratio(t, cliTimes['node -e 0'])} |`).join('\n')}
`;
writeFileSync(join(root, 'bench/results/cold.md'), md);
console.log(md);
