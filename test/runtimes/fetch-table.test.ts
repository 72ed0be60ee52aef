/**
 * The fetch adapter's status table under each runtime docs/fetch-runtimes.md names, against the BUILT package:
 * each runtime runs ./fetch-table.mjs, which imports `chat-webhooks` and `chat-webhooks/fetch` by package name,
 * and every row must pass. Bun, Deno and workerd come from npm into tools/runtimes/ (`npm run setup:runtimes`,
 * which .ci/run runs): without them only Node runs, and the others fail in CI and are skipped elsewhere
 * (test/support/tools.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool, toolPath } from '../support/tools.js';
import { rows } from './fetch-table.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name: string) => toolPath('runtimes', '.bin', name);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface Run {
  code: number | null;
  output: string;
}

/** Runs a program to its end, stdout and stderr together (workerd logs its verdict on stderr). */
function run(command: string, args: string[], cwd = root): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' };
    execFile(command, args, { cwd, env, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: `${stdout}\n${stderr}` });
    });
  });
}

/** The TAP plan and outcome lines of a run, so a run that printed nothing cannot pass. */
function tap(output: string) {
  const plan = /^1\.\.(\d+)$/m.exec(output);
  return {
    planned: plan ? Number(plan[1]) : 0,
    passed: output.match(/^ok \d+ /gm)?.length ?? 0,
    failed: output.match(/^not ok \d+ /gm) ?? [],
  };
}

function expectEveryRowPassed({ code, output }: Run): void {
  const result = tap(output);
  expect(result.failed, output).toEqual([]);
  expect(result.planned, output).toBe(rows.length);
  expect(result.passed, output).toBe(rows.length);
  expect(code, output).toBe(0);
}

describe('fetch adapter status table under each runtime (built package)', () => {
  let scratch: string;
  beforeAll(async () => {
    // CI builds before testing; a local `npm test` on a fresh clone builds here.
    if (!existsSync(join(root, 'dist/src/index.js'))) await run('npm', ['run', 'build', '--silent']);
    scratch = mkdtempSync(join(tmpdir(), 'chat-webhooks-runtimes-'));
  }, 120_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has rows to run', () => {
    expect(rows.length).toBeGreaterThan(10);
  });

  const installed = requireTool('runtimes', 'Bun, Deno and workerd', ['bun', 'deno', 'workerd'].map(bin));

  // Each runtime runs the table twice: as it resolves #platform by default (the `node` condition, which Bun
  // and Deno match too) and with the `worker` condition, which picks the web-only implementation (web.js:
  // SHA in JavaScript, Web Crypto randomness), so that one runs on V8 (Node, Deno) and JavaScriptCore (Bun).
  const runtimes: Array<[name: string, command: () => string, args: string[]]> = [
    ['Node', () => process.execPath, []],
  ];
  if (installed) runtimes.push(
    // --no-install: resolve from node_modules only, never fetch a missing package.
    ['Bun', () => bin('bun'), ['--no-install']],
    // Node resolution from this package.json and node_modules (self-reference through `exports`), nothing
    // fetched, no lock file written, and no permission at all: --no-prompt makes any file, env or network
    // access by the package fail the run instead of waiting for an answer.
    ['Deno', () => bin('deno'), ['run', '--no-prompt', '--node-modules-dir=manual', '--no-lock', '--cached-only']],
  );
  const platforms = [
    { label: 'default conditions', conditions: [], platform: 'node.js' },
    { label: '--conditions=worker', conditions: ['--conditions=worker'], platform: 'web.js' },
  ];
  describe.each(runtimes)('%s', (_name, command, args) => {
    it.each(platforms)('$label: every row passes, #platform from $platform', async ({ conditions, platform }) => {
      const result = await run(command(), [...args, ...conditions, here('run.mjs')]);
      expect(result.output).toContain(`# #platform: ${platformUrl(platform)}\n`);
      expectEveryRowPassed(result);
    });
  });

  it.runIf(installed)('workerd (Cloudflare Workers runtime) without nodejs_compat, the worker bundled by Bun', async () => {
    // node:* left external so that any use of it fails in workerd instead of being polyfilled by Bun.
    const bundle = await run(bin('bun'), [
      'build', here('worker.mjs'), '--target=browser', '--format=esm', '--external', 'node:*',
      `--metafile=${join(scratch, 'meta.json')}`, '--outfile', join(scratch, 'worker.js'),
    ]);
    expect(bundle.code, bundle.output).toBe(0);
    const graph = bundledGraph(join(scratch, 'meta.json'));
    expect(graph.modules).toContain('dist/src/platform/web.js');
    expect(graph.modules).not.toContain('dist/src/platform/node.js');
    // Bun inlines its own polyfill for a require('buffer') and lists it as an input named node:buffer.
    expect([...graph.modules, ...graph.imports].filter(isNodeBuiltin)).toEqual([]);
    writeFileSync(join(scratch, 'config.capnp'), workerdConfig());
    const result = await run(bin('workerd'), ['test', 'config.capnp'], scratch);
    expectEveryRowPassed(result);
    expect(result.output).toMatch(/\[ PASS \] main/);
  });
});

const platformUrl = (file: string) => new URL(`dist/src/platform/${file}`, new URL('../../', import.meta.url)).href;
const isNodeBuiltin = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);

/** The modules a Bun build took in (paths relative to the root) and every specifier they import. */
function bundledGraph(metafile: string): { modules: string[]; imports: string[] } {
  const inputs: Record<string, { imports?: Array<{ path: string }> }> = JSON.parse(readFileSync(metafile, 'utf8')).inputs;
  return {
    modules: Object.keys(inputs),
    imports: Object.values(inputs).flatMap((input) => (input.imports ?? []).map((entry) => entry.path)),
  };
}

/** One worker whose `test()` handler runs the table; `workerd test` calls it and reports PASS or FAIL. */
function workerdConfig(): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  # Before 2026-08-04, so nodejs_compat is off: the bundle (#platform resolved to web.js) needs no node:*.
  compatibilityDate = "2026-07-01",
);
`;
}
