/**
 * The README's and the guides' code is what a user pastes first, so every `js`/`ts` block of README.md and of
 * every docs/*.md is checked as the user would run it, all in one folder against one build, against the BUILT package resolved by name (the blocks are written into a folder inside this
 * repository, so `chat-webhooks` resolves to it by self-reference through package.json's `exports`):
 * - a block runs to exit code 0 with node (a `ts` block after type-checking under `strict` and stripping its
 *   types), with the environment variables the README tells users to set, and Redis when it reads REDIS_URL;
 * - a `<!-- server -->` block is started (its port 3000 moved to a free one), sent a real delivery by the
 *   package's CLI (`chat-webhooks send`), which must get a 200 (and, when marked "prints the text", show up
 *   in its output), then stopped;
 * - a `<!-- typecheck -->` block (ts) is type-checked under `strict` and not run;
 * - a `<!-- fragment -->` block is a piece of a larger program and is not run.
 * An unmarked block that does not run fails, with a message that says how to mark it (test/support/readme-blocks.ts).
 */
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, MARKING_HELP, type CodeBlock } from './support/readme-blocks.js';
import { freePort, startRedis, type RedisServer } from './support/redis-server.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((entry) => entry.endsWith('.md')).sort().map((entry) => `docs/${entry}`)];
const blocks = documents.flatMap((document) => codeBlocks(readFileSync(join(root, document), 'utf8'), document));
const checked = blocks.filter((block) => block.kind !== 'fragment');
const name = (block: CodeBlock) => `${block.file} line ${block.line} (${block.lang}${block.kind === 'server' ? ', server' : ''})`;
// A block's file name says where it comes from: docs/cli.md line 12 is block-docs_cli_md-12.
const slug = (document: string) => document.replace(/[^\w]/g, '_');
const documentOf = new Map(documents.map((document) => [slug(document), document]));

// What the README tells users to set (credentials, the platform's ids), with values for a local run.
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NO_COLOR: '1',
  WEBHOOK_USERNAME: 'app',
  WEBHOOK_PASSWORD: 's3cret',
  ACME_PASSWORD: 'acme-secret',
  GLOBEX_PASSWORD: 'globex-secret',
  OPS_PASSWORD: 'ops-secret',
  CHAT_APP_ID: 'readme1',
  CHAT_REGION: 'eu',
  CHAT_API_KEY: 'readme-api-key',
  WEBHOOK_CONFIG: JSON.stringify({
    id: 'support',
    name: 'Support desk',
    webhookURL: 'https://example.com/webhooks',
    useBasicAuth: true,
    username: 'app',
    password: 's3cret',
  }),
};

let folder: string;
let redis: RedisServer | undefined;
const file = (block: CodeBlock, ext: string) => join(folder, `block-${slug(block.file)}-${block.line}.${ext}`);

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/src/index.js'))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  // Inside the repository, so that 'chat-webhooks' resolves to this package by name; .mjs/.mts, so that each
  // is an ES module without a package.json of its own (which would hide this package's name).
  folder = mkdtempSync(join(root, '.readme-check-'));
  for (const block of checked) {
    if (block.lang === 'ts') writeFileSync(file(block, 'mts'), block.code);
    if (block.kind !== 'typecheck') writeFileSync(file(block, 'mjs'), javascript(block, block.code));
  }
  if (checked.some((block) => block.code.includes('REDIS_URL'))) {
    redis = await startRedis();
    env.REDIS_URL = redis.url;
  }
}, 120_000);

afterAll(async () => {
  await redis?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('README code blocks', () => {
  it('has blocks that run and a server among them, in the README and in the guides (so this suite cannot pass on nothing)', () => {
    expect(documents.length).toBeGreaterThan(5);
    expect(new Set(checked.map((block) => block.file)).size).toBeGreaterThan(3);
    expect(checked.filter((block) => block.kind === 'typecheck' && block.lang !== 'ts').map(name), 'only ts blocks can be <!-- typecheck -->').toEqual([]);
    expect(checked.filter((block) => block.kind === 'run').length).toBeGreaterThanOrEqual(3);
    expect(checked.filter((block) => block.kind === 'server').length).toBeGreaterThanOrEqual(1);
  });

  it('every ts block not marked fragment type-checks under strict against the built declarations', () => {
    const files = checked.filter((block) => block.lang === 'ts').map((block) => file(block, 'mts'));
    expect(files.length).toBeGreaterThan(0);
    const compilerOptions = {
      strict: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      types: ['node'],
      noEmit: true,
      typeRoots: [join(root, 'node_modules/@types')],
    };
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    const tsc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', folder], { encoding: 'utf8' });
    const output = `${tsc.stdout}${tsc.stderr}`.replace(
      /\S*block-(\w+)-(\d+)\.mts\((\d+),/g,
      (_all, document: string, line: string, row: string) => `${documentOf.get(document) ?? document}:${Number(line) + Number(row)} (`,
    );
    expect(output, MARKING_HELP).toBe('');
    expect(tsc.status).toBe(0);
  }, 60_000);

  it.each(checked.filter((block) => block.kind === 'run').map((block) => [name(block), block] as const))(
    '%s runs to exit code 0',
    async (_name, block) => {
      const run = await runToEnd(file(block, 'mjs'));
      expect(run.code, `${name(block)} failed:\n${run.output}\n${MARKING_HELP}`).toBe(0);
    },
  );

  it.each(checked.filter((block) => block.kind === 'server').map((block) => [name(block), block] as const))(
    '%s serves a real delivery: 200, then stops',
    async (_name, block) => {
      const port = await freePort();
      expect(block.code, `${name(block)}: a server block listens on port 3000 (moved to a free port here)`).toMatch(/listen\(3000\)/);
      writeFileSync(file(block, 'mjs'), javascript(block, block.code.replace(/listen\(3000\)/g, `listen(${port})`)));
      const server = startServer(file(block, 'mjs'));
      try {
        await waitForPort(port, server);
        const text = `README check ${randomUUID()}`;
        const send = await runToEnd(join(root, 'dist/src/cli/index.js'), [
          'send', 'message_sent', '--url', `http://127.0.0.1:${port}/webhooks`,
          '--user', 'app', '--password', 's3cret', '--set', `data.message.data.text=${text}`, '--json', '--no-progress',
        ]);
        expect(send.code, `${name(block)}: chat-webhooks send failed:\n${send.output}\nserver:\n${server.output()}`).toBe(0);
        expect(JSON.parse(send.output.split('\n')[0] ?? '{}')).toMatchObject({ status: 200 });
        if (block.printsText) await expect.poll(() => server.output(), { timeout: 5_000 }).toContain(text);
      } finally {
        await server.stop();
      }
      expect(server.output(), `${name(block)}: the server reported an error`).not.toMatch(/Error|error/);
    },
    60_000,
  );
});

/** A block as node runs it: a ts block with its types stripped (esbuild, as tsx or a bundler would). */
function javascript(block: CodeBlock, code: string): string {
  return block.lang === 'ts' ? transformSync(code, { loader: 'ts', format: 'esm' }).code : code;
}

/** Runs a node program to its end (30 s at most), stdout and stderr together. */
function runToEnd(program: string, args: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [program, ...args], { cwd: folder, env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: `${stdout}${stderr}` });
    });
  });
}

function startServer(program: string) {
  const child: ChildProcess = spawn(process.execPath, [program], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Resolves once the port accepts connections; fails if the server exits first or takes over 15 s. */
async function waitForPort(port: number, server: ReturnType<typeof startServer>): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`the server exited (${server.child.exitCode}):\n${server.output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the server did not listen on ${port} within 15 s:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
