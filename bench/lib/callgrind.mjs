/**
 * Counting a benchmark server's work under valgrind's callgrind (bench/instructions.mjs, bench/count-check.mjs):
 * the server (bench/servers.mjs) starts under callgrind, `warmup` requests let V8 optimise the path, the
 * counters are zeroed, `requests` more are sent over `connections` keep-alive sockets (one request at a time on
 * each, every body distinct), and the counters are dumped.
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

/** Sends `count` requests over the keep-alive sockets, one at a time on each; a response starts with its status line. */
async function load(port, count, kind, connections) {
  let left = count;
  const socket = () =>
    new Promise((resolve, reject) => {
      const connection = net.connect(port, '127.0.0.1');
      const next = () => {
        if (left <= 0) return void connection.end(resolve);
        left -= 1;
        connection.write(rawRequest(kind, seq++, port));
      };
      connection.on('data', (chunk) => {
        const text = chunk.toString('latin1');
        for (let at = text.indexOf('HTTP/1.1 '); at !== -1; at = text.indexOf('HTTP/1.1 ', at + 1)) {
          if (!text.startsWith('HTTP/1.1 200', at)) return reject(new Error(`answered ${text.slice(at, at + 12)}`));
          next();
        }
      });
      connection.on('connect', next);
      connection.on('error', reject);
    });
  await Promise.all(Array.from({ length: connections }, socket));
}

/** The event totals of the one dump written on request (it holds only what ran since the counters were zeroed). */
export function readDump(outDir, name) {
  const dump = readdirSync(outDir).find((file) => /\.\d+\.\d+$/.test(file));
  const text = readFileSync(join(outDir, dump ?? ''), 'utf8');
  const events = /^events: (.+)$/m.exec(text)?.[1].split(' ') ?? [];
  const totals = /^summary: (.+)$/m.exec(text)?.[1].split(' ').map(Number) ?? [];
  const count = Object.fromEntries(events.map((event, i) => [event, totals[i] ?? 0]));
  if (!(count.Ir > 0)) throw new Error(`no callgrind summary for ${name}`);
  return count;
}

/** Issue 27's simulated cycles from callgrind's events. */
export function cycles(c) {
  const l1 = c.I1mr + c.D1mr + c.D1mw;
  const ll = c.ILmr + c.DLmr + c.DLmw;
  return c.Ir + 10 * l1 + 100 * ll + 15 * (c.Bcm + c.Bim);
}

/** Counts of one HTTP server per request (cycles only with `simulate`). */
export async function measureServer(name, { warmup, requests, connections, simulate = true, env = {}, nodeFlags = [] }) {
  const outDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const { child, port } = await startServer(name, outDir, simulate, env, nodeFlags);
  try {
    const kind = name === 'octokit' ? 'octokit' : 'chat';
    await load(port, warmup, kind, connections);
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    await load(port, requests, kind, connections);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    const count = readDump(outDir, name);
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
