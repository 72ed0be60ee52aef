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
 * the path (5 000 by default: 1 000 over connections then closed, 4 000 over those counted over, enough for V8 to
 * recompile what the closing deoptimized; bench/lib/callgrind.mjs, `warmUp`), the counters are zeroed, `requests` more are sent over `connections` keep-alive sockets (one
 * request at a time on each, every body distinct, `Content-Type: Application/json` as the platform sends it),
 * and the counters are dumped. `lambda-bare` and `lambda-ours` are the Lambda handlers of bench/lambda.mjs in
 * process (bench/lambda-count.mjs), counted per invocation the same way, under node's `--predictable` and after
 * at least 20 000 invocations of warm-up; their JS heap allocated per invocation is measured too.
 *
 *   node bench/instructions.mjs [servers…] [--warmup 5000] [--requests 3000] [--connections 50] [--runs 1]
 *
 * Default servers: bare and ours on node:http and Fastify, octokit (with its signed GitHub body), lambda-bare
 * and lambda-ours. `--runs 3` measures each three times, in turns, and keeps the median.
 *
 * Writes bench/results/instructions.md (and instructions.json, which test/bench/count-regression reads) unless
 * `--no-write`. Needs valgrind (Debian's package); under it a server runs 50–100 times slower: the default run
 * takes about 8 minutes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { measureLambda, measureServer } from './lib/callgrind.mjs';
import { startRedis } from './lib/redis-server.mjs';

const LAMBDA_WARMUP = 20_000;
const PAIRS = [
  ['bare-node', 'ours-node'],
  ['bare-fastify', 'ours-fastify'],
  ['lambda-bare', 'lambda-ours'],
];
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    warmup: { type: 'string', default: '5000' },
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

/** A receiver with a durable inbox, counted as the others: its SQLite file or redis-server is its own. */
async function measureInbox(name) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-instructions-inbox-'));
  const redis = name === 'inbox-redis' ? await startRedis(dir) : undefined;
  try {
    const env = { INBOX_DB: join(dir, 'inbox.sqlite'), BENCH_COMMIT_TIMEOUT_MS: '60000', ...(redis ? { REDIS_URL: redis.url } : {}) };
    return await measureServer(name, { warmup, requests, connections, env });
  } finally {
    redis?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(name) {
  // As bench/lambda-count.mjs counts them: V8 still optimises ours for its first ~15 000 invocations.
  if (name.startsWith('lambda-')) return measureLambda(name.slice('lambda-'.length), { warmup: Math.max(warmup, LAMBDA_WARMUP), requests, nodeFlags: ['--predictable'] });
  if (name.startsWith('inbox-')) return measureInbox(name);
  return measureServer(name, { warmup, requests, connections });
}

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
if (counts['inbox-memory'] !== undefined) {
  lines.push('', '| receiver with an inbox (receives only) | cycles/ack | instructions/ack | ÷ memory (cycles) |', '|---|---:|---:|---:|');
  for (const name of ['inbox-memory', 'inbox-sqlite', 'inbox-redis']) {
    if (counts[name] === undefined) continue;
    const ratio = (counts[name].cycles / counts['inbox-memory'].cycles).toFixed(2);
    lines.push(`| ${name.slice('inbox-'.length)} | ${cell(name, 'cycles')} | ${cell(name, 'instructions')} | ${ratio}× |`);
  }
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
