// `npm run test:consumers`: the package as users get it. Builds and packs it, checks the tarball with
// @arethetypeswrong/cli and publint, installs it (with its dependencies, Express, Fastify and @types/node,
// from the npm cache when there) into a fresh folder holding the smoke projects beside this file, then runs:
//   cjs/        require() of every entry, on the current Node, the oldest Node 20, the last Node 20 without
//               require() of ES modules (20.18) and Node 22, and with --no-experimental-require-module;
//   esm/        import of every entry, Express and Fastify for real, on the same Nodes;
//   typescript/ one application compiled under node16 (CommonJS), nodenext (CommonJS and ES module) and
//               bundler resolution, by TypeScript 7 and TypeScript 5, then run;
//   peerless/   the package installed with none of its optional peers: import and require() of every entry
//               either load or say which peer to install (the exact sentence), and the declarations of the
//               entries with peers compile with skipLibCheck off (TypeScript 7); there too, the README's
//               30-second start: its server.mjs, in an app holding only the tarball, answers `chat-webhooks send`;
//   examples/aws/ installed as `sam build` installs it, the tarball at the path its package.json names.
// `--peerless` runs only peerless/ (quick, current Node only).
// The other Nodes and TypeScript 5 come from toolchains/ (installed on first use; linux-x64 only for Node),
// attw and publint from tools/packaging/ (`npm run setup:packaging`, which `npm run test:consumers` runs first).
// Ends with "N passed, N failed"; exits 1 if any check failed.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (folder, name) => join(folder, 'node_modules', '.bin', name);
const packaging = join(root, 'tools', 'packaging');
if (!existsSync(bin(packaging, 'attw'))) execFileSync(process.execPath, [join(root, 'scripts', 'setup-tool.mjs'), 'packaging'], { stdio: 'inherit' });
const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

const results = [];
/** Runs a command as one check: passes on exit code 0 (and output matching `expect`), else prints what it said. */
function check(name, command, args, { expect, ...options } = {}) {
  const started = Date.now();
  const run = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000, ...options });
  const ok = run.status === 0 && (!expect || expect.test(run.stdout));
  results.push(ok);
  console.log(`${ok ? '✓' : '✗'} ${name} (${Date.now() - started} ms)`);
  if (!ok) console.log(`${run.stdout ?? ''}${run.stderr ?? ''}${run.error ?? ''}`.trim().replace(/^/gm, '    '));
}

/** Installs the tarball alone (no optional peer, no @types) into a fresh folder and runs peerless/. */
function checkPeerless(tarball) {
  const folder = join(work, 'peerless');
  cpSync(join(here, 'peerless'), folder, { recursive: true });
  // The same application as an ES module, to check the ES module build's declarations too.
  cpSync(join(folder, 'types.ts'), join(folder, 'types.mts'));
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'consumers-peerless', private: true, dependencies: { 'chat-webhooks': `file:${tarball}` } }, null, 2));
  console.log('installing the tarball alone into a fresh project');
  npm(['install', '--prefer-offline', '--no-package-lock', '--omit=peer'], folder);
  check('without its optional peers, import of each entry loads or names the peer to install', process.execPath, ['esm.mjs'], { cwd: folder });
  check('without its optional peers, require() of each entry loads or names the peer to install', process.execPath, ['cjs.cjs'], { cwd: folder });
  check('without its optional peers, TypeScript 7 compiles the stores\' declarations with skipLibCheck off', bin(root, 'tsc'), ['-p', folder]);
}

/** The README's 30-second start as a newcomer follows it: its server block saved as server.mjs in `folder`
 * (an app holding the tarball and nothing else), started, sent an event by the installed `chat-webhooks send`. */
async function checkReadmeStart(folder) {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const code = /<!-- server: prints the text -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  writeFileSync(join(folder, 'server.mjs'), code.replace('listen(3000)', `listen(${port})`));
  const env = { ...process.env, WEBHOOK_USERNAME: 'app', WEBHOOK_PASSWORD: 's3cret', NO_COLOR: '1' };
  const server = spawn(process.execPath, ['server.mjs'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [server.stdout, server.stderr]) stream.on('data', (chunk) => (output += chunk));
  const text = `hello from the 30-second start ${process.pid}`;
  const send = [join(folder, 'node_modules', '.bin', 'chat-webhooks'), 'send', 'message_sent', '--url', `http://127.0.0.1:${port}/webhooks`,
    '--user', 'app', '--password', 's3cret', '--set', `data.message.data.text=${text}`, '--json', '--no-progress'];
  let sent = { status: null, stdout: '' };
  for (let tries = 0; tries < 50 && sent.status !== 0 && server.exitCode === null; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    sent = spawnSync(send[0], send.slice(1), { cwd: folder, env, encoding: 'utf8' });
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  server.kill('SIGTERM');
  const ok = code.includes("from 'chat-webhooks'") && sent.status === 0 && /"status":200/.test(sent.stdout) && output.includes(text);
  results.push(ok);
  console.log(`${ok ? '✓' : '✗'} the README's 30-second start: server.mjs in an app holding only the tarball answers chat-webhooks send with 200 and prints the text`);
  if (!ok) console.log(`${sent.stdout ?? ''}${sent.stderr ?? ''}\nserver: ${output}`.trim().replace(/^/gm, '    '));
}

/** examples/aws installed as `sam build` installs it: the tarball at the path its package.json names, then npm install. */
function checkAwsExample(tarball) {
  const folder = join(work, 'aws');
  cpSync(join(root, 'examples', 'aws'), folder, { recursive: true, filter: (source) => !/[/\\](vendor|node_modules|\.aws-sam)$/.test(source) });
  const spec = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).dependencies['chat-webhooks'];
  const target = join(folder, spec.replace(/^file:/, ''));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(tarball, target);
  console.log('installing examples/aws with the tarball where its package.json expects it');
  npm(['install', '--prefer-offline', '--no-package-lock'], folder);
  check('examples/aws: installed from its file: dependency, chat-webhooks/aws and chat-webhooks/lambda load', process.execPath,
    ['--input-type=module', '-e', "await import('chat-webhooks/aws'); await import('chat-webhooks/lambda'); console.log('loaded')"], { cwd: folder, expect: /loaded/ });
}

class Done extends Error {}

const work = mkdtempSync(join(tmpdir(), 'chat-webhooks-consumers-'));
try {
  console.log('building and packing');
  npm(['run', 'build', '--silent'], root);
  const tarball = join(work, npm(['pack', '--ignore-scripts', '--pack-destination', work], root).trim().split('\n').pop());

  checkPeerless(tarball);
  await checkReadmeStart(join(work, 'peerless'));
  if (process.argv.includes('--peerless')) throw new Done();
  checkAwsExample(tarball);

  check('@arethetypeswrong/cli: every entry resolves with types under node10, node16 (CJS and ESM) and bundler', bin(packaging, 'attw'), [tarball]);
  check('publint --strict', bin(packaging, 'publint'), ['run', tarball, '--strict']);

  const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const app = join(work, 'app');
  cpSync(here, app, { recursive: true, filter: (source) => !/[/\\](toolchains|node_modules|out|peerless)$/.test(source) && !source.endsWith('run.mjs') });
  const dependencies = { 'chat-webhooks': `file:${tarball}` };
  // ioredis, pg and @opentelemetry/api are pure JavaScript: chat-webhooks/redis, chat-webhooks/postgres and
  // chat-webhooks/otel load for real. better-sqlite3 (native) is left out: chat-webhooks/sqlite must then fail
  // naming it, which the smoke projects check.
  for (const name of ['express', 'fastify', '@types/node', 'ioredis', 'pg', '@opentelemetry/api']) dependencies[name] = rootPkg.devDependencies[name];
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumers', private: true, dependencies }, null, 2));
  console.log('installing the tarball into a fresh project');
  npm(['install', '--prefer-offline', '--no-package-lock'], app);

  const toolchains = join(here, 'toolchains');
  if (!existsSync(join(toolchains, 'node_modules'))) {
    console.log('installing toolchains (other Nodes, TypeScript 5): once');
    npm(['ci', '--prefer-offline'], toolchains);
  }
  const nodes = [process.execPath];
  for (const name of readdirSync(join(toolchains, 'node_modules')).filter((entry) => entry.startsWith('node-')).sort()) {
    nodes.push(join(toolchains, 'node_modules', name, 'bin', 'node'));
  }
  const versionOf = (node) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();

  for (const node of nodes) {
    const version = versionOf(node);
    check(`require() of every entry and deliveries, CommonJS, node ${version}`, node, ['cjs/index.js'], { cwd: app });
    check(`import of every entry, Express and Fastify, ES module, node ${version}`, node, ['esm/index.js'], { cwd: app });
    check(`the chat-webhooks command (package bin) lists the triggers, node ${version}`, node, [join(app, 'node_modules', '.bin', 'chat-webhooks'), 'triggers', '--json'], { cwd: app, expect: /"message_sent"/ });
    const [major, minor] = version.slice(1).split('.').map(Number);
    if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12)) {
      check(`CommonJS with require(esm) turned off, node ${version}`, node, ['--no-experimental-require-module', 'cjs/index.js'], { cwd: app });
    }
  }

  // TypeScript 7 also checks the package's declarations (skipLibCheck is off in the projects); TypeScript 5
  // skips them, as it would spend half a minute per project re-checking @types/node and Fastify's.
  const compilers = [
    ['TypeScript 7', bin(root, 'tsc'), []],
    ['TypeScript 5', bin(toolchains, 'tsc'), ['--skipLibCheck']],
  ];
  for (const project of readdirSync(join(app, 'typescript'), { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    const folder = join(app, 'typescript', project.name);
    cpSync(join(app, 'typescript', 'usage.ts'), join(folder, 'usage.ts'));
    for (const [compiler, tsc, flags] of compilers) {
      rmSync(join(folder, 'out'), { recursive: true, force: true });
      check(`${compiler} typechecks and emits the application, ${project.name}`, tsc, ['-p', folder, ...flags]);
      check(`the ${project.name} application compiled by ${compiler} runs`, process.execPath, [join(folder, 'out', 'usage.js')], { cwd: folder });
    }
  }
} catch (error) {
  if (!(error instanceof Done)) throw error;
} finally {
  rmSync(work, { recursive: true, force: true });
}

const passed = results.filter(Boolean).length;
console.log(`\n${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length && results.length > 0 ? 0 : 1);
