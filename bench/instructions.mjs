/**
 * `npm run bench:instructions`: CPU instructions per request, ours against the bare framework, counted by
 * valgrind's callgrind. Throughput ratios on a shared two-core machine drift by ±15 % from one run to the next
 * (the host's other tenants, CPU frequency); an instruction count is the same whatever else the machine does,
 * so it tells whether a change to the receive path made it cheaper, and how far from bare it is in work done.
 * It does not see time lost to cache misses or the kernel's share (socket writes), which the throughput run
 * (`npm run bench`) does: the two together say where a gap comes from.
 *
 * Each server (bench/servers.mjs) runs under `valgrind --tool=callgrind`; `warmup` requests let V8 optimise
 * the path, the counters are zeroed, `requests` more are sent over `connections` keep-alive sockets (one
 * request at a time on each, every body distinct as in the throughput run), and the counters are dumped.
 *
 *   node bench/instructions.mjs [servers…] [--warmup 5000] [--requests 8000] [--connections 50]
 *
 * `octokit` may be named among the servers (not run by default): it is then set against bare and ours on node:http.
 * `--runs 3` measures each server three times and keeps the median (see below).
 *
 * Writes bench/results/instructions.md. Needs valgrind (Debian's package); under it a server runs about
 * 50 times slower, so each takes about a minute.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rawRequest } from './lib/payloads.mjs';

const PAIRS = [
  ['bare-node', 'ours-node'],
  ['bare-fastify', 'ours-fastify'],
];
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    warmup: { type: 'string', default: '5000' },
    requests: { type: 'string', default: '8000' },
    connections: { type: 'string', default: '50' },
    runs: { type: 'string', default: '1' },
  },
});
const warmup = Number(values.warmup);
const requests = Number(values.requests);
const connections = Number(values.connections);
const runs = Number(values.runs);
const names = positionals.length > 0 ? positionals : PAIRS.flat();
const benchDir = fileURLToPath(new URL('.', import.meta.url));
let seq = 1_000_000_000;

/** Starts a server under callgrind; resolves with the child and its port once it listens. */
function startServer(name, outDir) {
  const args = ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`];
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

/** Instructions per request of one server. */
async function measure(name) {
  const outDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  const { child, port } = await startServer(name, outDir);
  try {
    // octokit gets the signed GitHub-shaped body of the same size that the throughput run sends it.
    const kind = name === 'octokit' ? 'octokit' : 'chat';
    await load(port, warmup, kind);
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    await load(port, requests, kind);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    // The dump written on request holds only what ran since the counters were zeroed.
    const dump = readdirSync(outDir).find((file) => /\.\d+\.\d+$/.test(file));
    const total = Number(/^summary: (\d+)/m.exec(readFileSync(join(outDir, dump ?? ''), 'utf8'))?.[1]);
    if (!(total > 0)) throw new Error(`no callgrind summary for ${name}`);
    return total / requests;
  } finally {
    child.kill('SIGKILL');
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * With --runs N each server is measured N times, in turns (so that a drift of the machine hits all alike), and
 * the median is kept: ours-node has counted 181–185 k in most runs and 211 k in some (a state of V8's
 * compiled code that a run does or does not reach), and one run cannot tell which is typical.
 */
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let run = 0; run < runs; run += 1) {
  for (const name of names) {
    const count = await measure(name);
    samples[name].push(count);
    console.log(`${name}: ${Math.round(count).toLocaleString('en-US')} instructions/request`);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const counts = Object.fromEntries(names.map((name) => [name, median(samples[name])]));
const spread = (name) =>
  runs > 1 ? ` (runs: ${samples[name].map((count) => Math.round(count / 1000)).join(', ')} k)` : '';
const lines = [
  '# Instructions per request (`npm run bench:instructions`)',
  '',
  `node ${process.version}, valgrind callgrind; ${warmup} requests to warm up, then ${requests} counted over ${connections}`,
  'keep-alive connections, one request at a time on each, every body distinct. User-space instructions of the',
  "server process (all its threads); the kernel's work and the time cache misses cost are not in them. Run to run a",
  'count moves by a few per cent (V8 compiling, garbage collections falling in or out of the counted requests).',
  ...(runs > 1 ? ['', `Each server measured ${runs} times, in turns; the median is shown, every run's count in brackets.`] : []),
  '',
  '| server | instructions/request | bare ÷ ours |',
  '|---|---:|---:|',
];
for (const [bare, ours] of PAIRS) {
  if (counts[bare] === undefined || counts[ours] === undefined) continue;
  lines.push(`| ${bare} | ${Math.round(counts[bare]).toLocaleString('en-US')}${spread(bare)} | |`);
  lines.push(`| ${ours} | ${Math.round(counts[ours]).toLocaleString('en-US')}${spread(ours)} | ${(counts[bare] / counts[ours]).toFixed(2)}× |`);
}
if (counts.octokit !== undefined) {
  lines.push('', '| against @octokit/webhooks | instructions/request | octokit ÷ this |', '|---|---:|---:|');
  lines.push(`| octokit | ${Math.round(counts.octokit).toLocaleString('en-US')}${spread('octokit')} | |`);
  for (const name of ['bare-node', 'ours-node']) {
    if (counts[name] === undefined) continue;
    lines.push(`| ${name} | ${Math.round(counts[name]).toLocaleString('en-US')}${spread(name)} | ${(counts.octokit / counts[name]).toFixed(2)}× |`);
  }
}
writeFileSync(new URL('results/instructions.md', import.meta.url), `${lines.join('\n')}\n`);
console.log(lines.slice(6).join('\n'));
