/**
 * Counting a benchmark server's work under valgrind's callgrind (bench/instructions.mjs, bench/count-check.mjs):
 * the server (bench/servers.mjs) starts under callgrind, `warmup` requests let V8 optimise the path (`warmUp`:
 * over two generations of connections), the counters are zeroed, `requests` more are sent over the
 * `connections` keep-alive sockets the warm-up left open (one request at a time on each, every body distinct),
 * and the counters are dumped before the sockets are closed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest } from './payloads.mjs';

export const benchDir = fileURLToPath(new URL('..', import.meta.url));
/** Without the cache and branch simulation callgrind counts instructions only, about twice as fast. */
export const callgrindArgs = (simulate) => [
  '--tool=callgrind',
  '--smc-check=all-non-file',
  ...(simulate ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
];
let seq = 1_000_000_000;

/**
 * The process a name stands for: a server of bench/servers.mjs, or `inbox-<memory|sqlite|redis>`, a receiver of
 * bench/inbox-server.mjs with that inbox that only receives (the worker runs elsewhere), as bench:inboxes runs it.
 */
function command(name) {
  const inbox = /^inbox-(\w+)$/.exec(name)?.[1];
  if (inbox) return [join(benchDir, 'inbox-server.mjs'), inbox, 'receive'];
  return [join(benchDir, 'servers.mjs'), name, '0'];
}

/** Starts a server under callgrind; resolves with the child and its port once it listens. */
function startServer(name, outDir, simulate, env, nodeFlags) {
  const args = [...callgrindArgs(simulate), `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`];
  const child = spawn('valgrind', [...args, process.execPath, ...nodeFlags, ...command(name)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const port = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port) resolve({ child, port: Number(port) });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening`)));
  });
}

/** Opens `connections` keep-alive sockets to the server. */
export function connect(port, connections) {
  const open = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
    });
  return Promise.all(Array.from({ length: connections }, open));
}

/** Sends `count` requests over open sockets, one at a time on each; a response starts with its status line. */
export async function send(sockets, port, count, kind) {
  let left = count;
  const run = (socket) =>
    new Promise((resolve, reject) => {
      const next = () => {
        if (left <= 0) return done();
        left -= 1;
        socket.write(rawRequest(kind, seq++, port));
      };
      const onData = (chunk) => {
        const text = chunk.toString('latin1');
        for (let at = text.indexOf('HTTP/1.1 '); at !== -1; at = text.indexOf('HTTP/1.1 ', at + 1)) {
          if (!text.startsWith('HTTP/1.1 200', at)) return fail(new Error(`answered ${text.slice(at, at + 12)}`));
          next();
        }
      };
      const done = () => {
        socket.off('data', onData).off('error', fail);
        resolve();
      };
      const fail = (error) => {
        socket.off('data', onData).off('error', fail);
        reject(error);
      };
      socket.on('data', onData).on('error', fail);
      next();
    });
  await Promise.all(sockets.map(run));
}

/** Ends the sockets and waits until the server has closed each. */
export function close(sockets) {
  return Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve).end())));
}

/** Requests of the warm-up's first generation of connections. */
const FIRST_GENERATION = 1000;

/**
 * The warm-up, in two generations of connections: the first are closed halfway, the second stay open for the
 * count. Closing the first connections and opening new ones deoptimizes node's stream and socket functions
 * ("wrong map": sockets that ended) and those they inlined, in bare and ours alike, and V8 then recompiles
 * some 35 of them on its background threads: with the warm-up on one generation and the count on another,
 * all that (about 100 k instructions a request of compiler threads at 50 connections, and every request
 * served by deoptimized code until the new code was in) fell inside the count, in an amount that followed
 * the threads' timing: ours-fastify counted 279–340 k instructions a request in five runs of the same code.
 * Resolves with the sockets to count over.
 */
export async function warmUp(port, count, kind, connections) {
  const first = await connect(port, connections);
  await send(first, port, Math.min(FIRST_GENERATION, Math.floor(count / 5)), kind);
  await close(first);
  const second = await connect(port, connections);
  await send(second, port, count - Math.min(FIRST_GENERATION, Math.floor(count / 5)), kind);
  return second;
}

/** The one dump written on request (it holds only what ran since the counters were zeroed). */
function dumpFile(outDir) {
  return join(outDir, readdirSync(outDir).find((file) => /\.\d+\.\d+$/.test(file)) ?? '');
}

/** The event totals of the one dump written on request. */
export function readDump(outDir, name) {
  const text = readFileSync(dumpFile(outDir), 'utf8');
  const events = /^events: (.+)$/m.exec(text)?.[1].split(' ') ?? [];
  const totals = /^summary: (.+)$/m.exec(text)?.[1].split(' ').map(Number) ?? [];
  const count = Object.fromEntries(events.map((event, i) => [event, totals[i] ?? 0]));
  if (!(count.Ir > 0)) throw new Error(`no callgrind summary for ${name}`);
  return count;
}

/**
 * Instructions a dump spent in V8's optimizing compiler: the inclusive cost of the runtime calls that enter it
 * (with `--predictable` TurboFan runs on the main thread, inside them). Some of that work starts by the clock,
 * not by the requests: node's http keeps its Date header for a second and re-arms a timer each time
 * (`setUnrefTimeout`), which V8 tiers up after enough seconds, so a count that happens to hold that compile
 * counted 20 M instructions more (+14 % a request at one connection, 1 run in 3 or 4 here and in CI).
 */
export function optimizingCompilerCost(outDir) {
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dumpFile(outDir)], { encoding: 'utf8', maxBuffer: 64 << 20 });
  let total = 0;
  // A recursive entry (`name'2`) is already inside its first one's inclusive cost.
  for (const [, cost] of annotated.matchAll(/^\s*([\d,]+) .*:v8::internal::Runtime_CompileOptimized(?:_\w+|OSR)?\(/gm)) {
    total += Number(cost.replaceAll(',', ''));
  }
  return total;
}

/** Issue 27's simulated cycles from callgrind's events. */
export function cycles(c) {
  const l1 = c.I1mr + c.D1mr + c.D1mw;
  const ll = c.ILmr + c.DLmr + c.DLmw;
  return c.Ir + 10 * l1 + 100 * ll + 15 * (c.Bcm + c.Bim);
}

/**
 * Counts of one HTTP server per request (cycles only with `simulate`). `compiler: 'excluded'` leaves out the
 * optimizing compiler's instructions (`optimizingCompilerCost`; instructions only, so not with `simulate`).
 */
export async function measureServer(name, { warmup, requests, connections, simulate = true, env = {}, nodeFlags = [], compiler = 'counted' }) {
  if (compiler === 'excluded' && simulate) throw new Error('measureServer: the compiler can be left out of instructions only (simulate: false)');
  const outDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const { child, port } = await startServer(name, outDir, simulate, env, nodeFlags);
  try {
    const kind = name === 'octokit' ? 'octokit' : 'chat';
    const sockets = await warmUp(port, warmup, kind, connections);
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    await send(sockets, port, requests, kind);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    await close(sockets);
    const count = readDump(outDir, name);
    if (compiler === 'excluded') count.Ir -= optimizingCompilerCost(outDir);
    return { instructions: count.Ir / requests, cycles: simulate ? cycles(count) / requests : undefined };
  } finally {
    child.kill('SIGKILL');
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * Counts (and JS heap allocated) of one Lambda handler (`bare`, `core` or `ours`) per invocation, through
 * bench/lambda-count.mjs's handshake. `keep`: a directory to leave the callgrind dump in (for callgrind_annotate).
 */
export async function measureLambda(name, { warmup, requests, nodeFlags = [], keep }) {
  const outDir = keep ?? mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const script = join(benchDir, 'lambda-count.mjs');
  const node = [process.execPath, ...nodeFlags, '--max-semi-space-size=256', '--expose-gc', script, name, String(warmup), String(requests)];
  const child = spawn('valgrind', [...callgrindArgs(true), `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`, ...node], { stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const lines = [];
    let wake = () => {};
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const parts = out.split('\n');
      out = parts.pop();
      lines.push(...parts);
      wake();
    });
    const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${lines.join(' ')}`))));
    const line = async (pattern) => {
      for (;;) {
        const found = lines.find((text) => pattern.test(text));
        if (found) return found;
        await Promise.race([new Promise((resolve) => (wake = resolve)), exited]);
      }
    };
    await line(/^warm$/);
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    child.stdin.write('go\n');
    await line(/^done$/);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    const count = readDump(outDir, name);
    child.stdin.write('go\n');
    const [, bytes, gcs] = (await line(/^alloc /)).split(' ').map(Number);
    return { instructions: count.Ir / requests, cycles: cycles(count) / requests, allocated: gcs === 0 ? bytes : undefined };
  } finally {
    child.kill('SIGKILL');
    if (!keep) rmSync(outDir, { recursive: true, force: true });
  }
}
