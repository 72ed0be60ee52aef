/**
 * `npm run bench:instructions`: simulated CPU cycles per request, ours against the bare framework, counted by
 * valgrind's callgrind with its cache and branch simulation. Throughput ratios on a shared two-core machine
 * drift by ±15 % from one run to the next (the host's other tenants, CPU frequency); a count is the same
 * whatever else the machine does, so it tells whether a change to the receive path made it cheaper, and how far
 * from bare it is. The cycles are those of issue 27:
 *
 *   cycles = instructions + 10 × L1 misses + 100 × last-level misses + 15 × mispredicted branches
 *
 * (misses of instruction fetches, reads and writes; mispredicted conditional and indirect branches). They do
 * not see the kernel's share (socket writes), which the throughput run (`npm run bench`) does.
 *
 * Each HTTP server (bench/servers.mjs) runs under `valgrind --tool=callgrind`; `warmup` requests let V8 optimise
 * the path, the counters are zeroed, `requests` more are sent over `connections` keep-alive sockets (one
 * request at a time on each, every body distinct, `Content-Type: Application/json` as the platform sends it),
 * and the counters are dumped. `lambda-bare` and `lambda-ours` are the Lambda handlers of bench/lambda.mjs in
 * process (bench/lambda-count.mjs), counted per invocation the same way; their JS heap allocated per
 * invocation is measured too.
 *
 *   node bench/instructions.mjs [servers…] [--warmup 3000] [--requests 3000] [--connections 50] [--runs 1]
 *
 * Default servers: bare and ours on node:http and Fastify, octokit (with its signed GitHub body), lambda-bare
 * and lambda-ours. `--runs 3` measures each three times, in turns, and keeps the median.
 *
 * Writes bench/results/instructions.md (and instructions.json, which test/bench/count-regression reads) unless
 * `--no-write`. Needs valgrind (Debian's package); under it a server runs 50–100 times slower: the default run
 * takes about 8 minutes.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rawRequest } from './lib/payloads.mjs';

const PAIRS = [
  ['bare-node', 'ours-node'],
  ['bare-fastify', 'ours-fastify'],
  ['lambda-bare', 'lambda-ours'],
];
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    warmup: { type: 'string', default: '3000' },
    requests: { type: 'string', default: '3000' },
    connections: { type: 'string', default: '50' },
    runs: { type: 'string', default: '1' },
    'no-write': { type: 'boolean', default: false },
  },
});
const warmup = Number(values.warmup);
const requests = Number(values.requests);
const connections = Number(values.connections);
const runs = Number(values.runs);
const names = positionals.length > 0 ? positionals : ['bare-node', 'ours-node', 'bare-fastify', 'ours-fastify', 'octokit', 'lambda-bare', 'lambda-ours'];
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const CALLGRIND = ['--tool=callgrind', '--smc-check=all-non-file', '--cache-sim=yes', '--branch-sim=yes'];
let seq = 1_000_000_000;

/** Starts a server under callgrind; resolves with the child and its port once it listens. */
function startServer(name, outDir) {
  const args = [...CALLGRIND, `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`];
  const child = spawn('valgrind', [...args, process.execPath, join(benchDir, 'servers.mjs'), name, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
async function load(port, count, kind) {
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
function readDump(outDir, name) {
  const dump = readdirSync(outDir).find((file) => /\.\d+\.\d+$/.test(file));
  const text = readFileSync(join(outDir, dump ?? ''), 'utf8');
  const events = /^events: (.+)$/m.exec(text)?.[1].split(' ') ?? [];
  const totals = /^summary: (.+)$/m.exec(text)?.[1].split(' ').map(Number) ?? [];
  const count = Object.fromEntries(events.map((event, i) => [event, totals[i] ?? 0]));
  if (!(count.Ir > 0)) throw new Error(`no callgrind summary for ${name}`);
  return count;
}

/** Issue 27's simulated cycles from callgrind's events. */
function cycles(c) {
  const l1 = c.I1mr + c.D1mr + c.D1mw;
  const ll = c.ILmr + c.DLmr + c.DLmw;
  return c.Ir + 10 * l1 + 100 * ll + 15 * (c.Bcm + c.Bim);
}

/** Counts of one HTTP server per request. */
async function measureServer(name) {
  const outDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const { child, port } = await startServer(name, outDir);
  try {
    const kind = name === 'octokit' ? 'octokit' : 'chat';
    await load(port, warmup, kind);
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    await load(port, requests, kind);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    const count = readDump(outDir, name);
    return { instructions: count.Ir / requests, cycles: cycles(count) / requests };
  } finally {
    child.kill('SIGKILL');
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Counts (and JS heap allocated) of one Lambda handler per invocation, through bench/lambda-count.mjs's handshake. */
async function measureLambda(name) {
  const outDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const script = join(benchDir, 'lambda-count.mjs');
  const node = [process.execPath, '--max-semi-space-size=256', script, name.slice('lambda-'.length), String(warmup), String(requests)];
  const child = spawn('valgrind', [...CALLGRIND, `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`, ...node], { stdio: ['pipe', 'pipe', 'pipe'] });
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
    rmSync(outDir, { recursive: true, force: true });
  }
}

const measure = (name) => (name.startsWith('lambda-') ? measureLambda(name) : measureServer(name));

/**
 * With --runs N each server is measured N times, in turns, and the median is kept: ours-node has counted
 * 181–185 k instructions in most runs and 211 k in some (a state of V8's compiled code that a run does or does
 * not reach), and one run cannot tell which is typical.
 */
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let run = 0; run < runs; run += 1) {
  for (const name of names) {
    const count = await measure(name);
    samples[name].push(count);
    const alloc = count.allocated === undefined ? '' : `, ${(count.allocated / 1024).toFixed(2)} KB allocated`;
    console.log(`${name}: ${Math.round(count.cycles).toLocaleString('en-US')} cycles, ${Math.round(count.instructions).toLocaleString('en-US')} instructions${alloc}`);
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const figure = (name, key) => median(samples[name].map((count) => count[key]).filter((value) => value !== undefined));
const counts = Object.fromEntries(
  names.map((name) => [name, { cycles: figure(name, 'cycles'), instructions: figure(name, 'instructions'), allocated: figure(name, 'allocated') }]),
);
const k = (value) => `${Math.round(value).toLocaleString('en-US')}`;
const spread = (name, key) => (runs > 1 ? ` (${samples[name].map((count) => (count[key] / 1000).toFixed(1)).join(', ')} k)` : '');
const cell = (name, key) => `${k(counts[name][key])}${spread(name, key)}`;
const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
const lines = [
  '# Simulated cycles per request (`npm run bench:instructions`)',
  '',
  `node ${process.version}, valgrind callgrind with \`--cache-sim=yes --branch-sim=yes\` on ${cpus().length} × ${cpu}; ${warmup} requests`,
  `to warm up, then ${requests} counted over ${connections} keep-alive connections, one request at a time on each, every body distinct`,
  '(~1 KB `message_sent`, Basic auth, `Content-Type: Application/json` as the platform sends it). Cycles = instructions',
  '+ 10 × L1 misses + 100 × last-level misses + 15 × mispredicted branches, of the server process (all its threads);',
  "the kernel's work is not in them. Lambda: the handlers of bench/lambda.mjs in process, per invocation awaited one",
  'at a time, with the JS heap allocated per invocation (no garbage collection inside the measured batch).',
  ...(runs > 1 ? ['', `Each server measured ${runs} times, in turns; the median is shown, every run's count in brackets.`] : []),
  '',
  '| server | cycles/request | instructions/request | bare ÷ ours (cycles) | bare ÷ ours (instructions) |',
  '|---|---:|---:|---:|---:|',
];
for (const [bare, ours] of PAIRS) {
  if (counts[bare] === undefined || counts[ours] === undefined) continue;
  const ratio = (key) => `${(counts[bare][key] / counts[ours][key]).toFixed(3)}`;
  lines.push(`| ${bare} | ${cell(bare, 'cycles')} | ${cell(bare, 'instructions')} | | |`);
  lines.push(`| ${ours} | ${cell(ours, 'cycles')} | ${cell(ours, 'instructions')} | ${ratio('cycles')} | ${ratio('instructions')} |`);
}
if (counts['lambda-bare']?.allocated !== undefined && counts['lambda-ours']?.allocated !== undefined) {
  const [bare, ours] = [counts['lambda-bare'], counts['lambda-ours']];
  lines.push(
    '',
    `Lambda, ours ÷ bare: ${(ours.cycles / bare.cycles).toFixed(2)}× the cycles, ${(ours.allocated / bare.allocated).toFixed(2)}× the JS heap allocated`,
    `(${(ours.allocated / 1024).toFixed(2)} KB against ${(bare.allocated / 1024).toFixed(2)} KB per invocation).`,
  );
}
if (counts.octokit !== undefined) {
  lines.push('', '| against @octokit/webhooks | cycles/request | octokit ÷ this |', '|---|---:|---:|');
  lines.push(`| octokit | ${cell('octokit', 'cycles')} | |`);
  for (const name of ['bare-node', 'ours-node']) {
    if (counts[name] === undefined) continue;
    lines.push(`| ${name} | ${cell(name, 'cycles')} | ${(counts.octokit.cycles / counts[name].cycles).toFixed(2)}× |`);
  }
}
if (!values['no-write']) {
  writeFileSync(new URL('results/instructions.md', import.meta.url), `${lines.join('\n')}\n`);
  const json = { node: process.version, cpu, warmup, requests, connections, runs, counts };
  writeFileSync(new URL('results/instructions.json', import.meta.url), `${JSON.stringify(json, null, 2)}\n`);
}
console.log(lines.slice(9).join('\n'));
