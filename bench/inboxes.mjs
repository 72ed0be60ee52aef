/**
 * `npm run bench:inboxes`: acknowledgements per second and p50/p99 acknowledgement latency at 64 connections
 * with the memory, SQLite, Redis and PostgreSQL inboxes side by side in one run (issue 11, deliverable 8; issue 26), then the cost of
 * a SQLite `put` with 1 million keys in its window against an empty one, and memory while keys accumulate.
 *
 * Each receiver (bench/inbox-server.mjs: node:http, createWebhooks with the inbox and an in-process worker)
 * runs in its own process pinned to core 0, autocannon (bench/loadgen.mjs) on core 1; redis-server (and a throw-away
 * PostgreSQL with default settings, bench/lib/postgres.mjs, on the same core as Redis) is started
 * here (AOF on, `appendfsync everysec`, noeviction) and pinned to core 2 where there is one, else to core 1
 * beside autocannon, so that core 0 is the receiver's alone in every row, as it would be with Redis on its own
 * machine (`REDIS_CORE=any` leaves it unpinned, free to run on the receiver's core; `REDIS_CORE=n` pins it to core n).
 * In each round, every durable inbox's run sits between two runs of the memory inbox (memory, SQLite, memory,
 * Redis, memory, PostgreSQL, memory; odd rounds in reverse), and its ratio is to the mean of those two: this machine's speed drifts
 * by 2× within a minute, and the two neighbours see the drift of the moments before and after. An inbox's ratio
 * is the median of its rounds' ratios. After the runs every receiver reports its inbox's counts: for the
 * durable inboxes, stored events must be at least the 200s sent (nothing acknowledged before its commit).
 * Writes bench/results/inboxes.md.
 * Besides acks, each run records the CPU time per acknowledgement of the receiver's process and of the store's
 * server, redis-server or PostgreSQL's processes (whose work takes turns with autocannon's when both are on core 1).
 * 5 rounds of 3 s per run; BENCH_QUICK=1: one round of 2 s. BENCH_SECONDS, BENCH_ROUNDS override.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from './lib/postgres.mjs';
import { canPin, startChild } from './lib/procs.mjs';

const quick = process.env.BENCH_QUICK === '1';
const config = {
  seconds: Number(process.env.BENCH_SECONDS ?? (quick ? 2 : 3)),
  rounds: Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 5)),
  warmupSeconds: quick ? 1 : 2,
  connections: 64,
};
const KINDS = ['memory', 'sqlite', 'redis', 'postgres'];
/** consume: one process receives and runs the handlers; receive: `consume: false`, workers elsewhere. */
const MODES = ['consume', 'receive'];
/** BENCH_SETUPS=memory/consume,redis/consume runs only those (while working on one inbox; the report needs all). */
const only = process.env.BENCH_SETUPS?.split(',');
const SETUPS = MODES.flatMap((mode) => KINDS.map((kind) => ({ kind, mode, name: `${kind}/${mode}` }))).filter(
  ({ name }) => !only || only.includes(name),
);
const dir = mkdtempSync(join(tmpdir(), 'bench-inboxes-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
const ratioText = ({ median: mid, min, max }) => `${mid.toFixed(2)}× (${min.toFixed(2)}–${max.toFixed(2)})`;

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The core redis-server runs on: one of its own (2) where the machine has a third core, as Redis would have in
 * production; otherwise the load generator's (1), so that its work never lands on the receiver's core (unpinned,
 * it did, and the receiver's socket writes seemed to cost 17 % of its time instead of 2 %). On core 1 it waits
 * for autocannon's time slices and runs on a cold cache: 60–120 µs per put there, against 45–57 µs alone.
 * REDIS_CORE=n pins it to core n; undefined (unpinned) with REDIS_CORE=any or where taskset cannot pin.
 */
function redisCore() {
  const chosen = process.env.REDIS_CORE ?? (cpus().length >= 3 ? '2' : '1');
  return chosen === 'any' || !canPin() ? undefined : chosen;
}

async function startRedis() {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'];
  args.push('--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction');
  const [command, ...rest] = redisCore() === undefined ? ['redis-server', ...args] : ['taskset', '-c', redisCore(), 'redis-server', ...args];
  const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk) => chunk.toString().includes('Ready to accept') && resolve());
  });
  return { url: `redis://127.0.0.1:${port}`, child };
}

/** CPU time (user + system) in µs from the child's own report, and its handler count. */
async function cpuOf(server) {
  const { cpu, handled } = await server.handle.call({ type: 'cpu' });
  return { us: cpu.user + cpu.system, handled };
}
/** The store server's CPU time in µs (redis-server's, PostgreSQL's processes'), from /proc (Linux). */
function storeCpu(kind) {
  if (kind === 'redis') return redisCpu();
  if (kind === 'postgres') return postgres.cpuUs();
  return NaN;
}
/** redis-server's CPU time in µs, from /proc (Linux). */
function redisCpu() {
  try {
    const fields = readFileSync(`/proc/${redis.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * One timed run. A receiver that also handles may acknowledge faster than it handles: the run then waits
 * until every acknowledged event was handled (the backlog would otherwise take the next run's CPU), and
 * counts that time too: `sustained` is acks over load time plus drain time, and the CPU per ack covers both.
 */
async function run(loadgen, server, seconds) {
  await server.handle.call({ type: 'between-runs' });
  const before = { receiver: (await cpuOf(server)).us, store: storeCpu(server.kind) };
  // Distinct bodies for up to 500 acks/s per connection (32 000/s at 64): autocannon cycles through each
  // connection's list, and a repeat would be a cheaper duplicate answer and no new stored event.
  const perClient = Math.ceil(seconds * 500);
  const reply = await loadgen.call({ type: 'run', port: server.port, kind: 'ours', connections: config.connections, duration: seconds, perClient });
  if (reply.error) throw new Error(reply.error);
  server.acks += reply.result.ok;
  const drainStart = performance.now();
  let after = await cpuOf(server);
  while (server.mode === 'consume' && after.handled < server.acks && performance.now() - drainStart < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    after = await cpuOf(server);
  }
  const drainSeconds = server.mode === 'consume' ? (performance.now() - drainStart) / 1000 : 0;
  const acks = Math.max(1, reply.result.ok);
  return {
    ...reply.result,
    drainSeconds,
    sustained: reply.result.ok / (seconds + drainSeconds),
    receiverUs: (after.us - before.receiver) / acks,
    storeUs: (storeCpu(server.kind) - before.store) / acks,
  };
}

/** Runs a setup and prints its line. */
async function measure(name, round) {
  const result = await run(loadgen, servers[name], config.seconds);
  servers[name].runs.push(result);
  console.log(`${name.padEnd(14)} round ${round + 1}: ${Math.round(result.rps)} acks/s (${Math.round(result.sustained)} with ${result.drainSeconds.toFixed(2)} s to handle the rest), p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, CPU/ack receiver ${result.receiverUs.toFixed(1)} µs, store server ${result.storeUs.toFixed(1)} µs, load generator ${(result.loadgenCpu * 1e6 / result.rps).toFixed(1)} µs, non-2xx ${result.non2xx}, errors ${result.errors}`);
  return result;
}

/**
 * One round of a mode: memory, then each durable inbox followed by memory again (in reverse on odd rounds);
 * each durable run's baseline is the mean of the memory runs just before and just after it.
 */
async function sandwich(mode, round) {
  const memory = `memory/${mode}`;
  const durable = SETUPS.filter((setup) => setup.mode === mode && setup.kind !== 'memory').map(({ name }) => name);
  if (round % 2) durable.reverse();
  if (!servers[memory]) {
    for (const name of durable) await measure(name, round);
    return;
  }
  let before = await measure(memory, round);
  for (const name of durable) {
    const result = await measure(name, round);
    const after = await measure(memory, round);
    result.baseline = { rps: (before.rps + after.rps) / 2, sustained: (before.sustained + after.sustained) / 2 };
    before = after;
  }
}

const redis = await startRedis();
const postgres = await startPostgres({ core: redisCore() });
const loadgen = startChild('loadgen.mjs', [], { core: 1 });
await loadgen.ready;
const servers = {};
for (const { kind, mode, name } of SETUPS) {
  const env = { INBOX_DB: join(dir, `${mode}.sqlite`), REDIS_URL: redis.url, POSTGRES_URL: postgres.url };
  const handle = startChild('inbox-server.mjs', [kind, mode], { core: 0, env });
  servers[name] = { kind, mode, handle, port: (await handle.ready).port, runs: [], acks: 0 };
}

try {
  for (const { name } of SETUPS) await run(loadgen, servers[name], config.warmupSeconds);
  for (let round = 0; round < config.rounds; round++) {
    for (const mode of MODES) await sandwich(mode, round);
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rows = [];
  for (const { kind, mode, name } of SETUPS) {
    const { runs, acks, handle } = servers[name];
    const stats = await handle.call({ type: 'stats' });
    const { pending, running, done, dead } = stats.inbox;
    const stored = pending + running + done + dead;
    /** Each run's ratio to the memory runs on either side of it (1 for the memory inbox itself). */
    const vsMemory = (field) => (runs[0]?.baseline || kind === 'memory' ? spread(runs.map((r) => (r.baseline ? r[field] / r.baseline[field] : 1))) : undefined);
    rows.push({
      kind,
      mode,
      vsMemory: vsMemory('rps'),
      sustainedVsMemory: vsMemory('sustained'),
      rps: median(runs.map((r) => r.rps)),
      sustained: median(runs.map((r) => r.sustained)),
      drainSeconds: median(runs.map((r) => r.drainSeconds)),
      p50: median(runs.map((r) => r.latency.p50)),
      p99: median(runs.map((r) => r.latency.p99)),
      receiverUs: median(runs.map((r) => r.receiverUs)),
      storeUs: kind === 'redis' || kind === 'postgres' ? median(runs.map((r) => r.storeUs)) : undefined,
      non2xx: runs.reduce((n, r) => n + r.non2xx + r.errors, 0),
      acks,
      stored: kind === 'memory' ? undefined : stored,
      handled: stats.handled,
      errors: stats.errorCodes,
    });
  }
  if (only) {
    for (const r of rows) console.log(`${r.kind}/${r.mode}: ${Math.round(r.rps)} acks/s, ${Math.round(r.sustained)} sustained (medians), vs memory ${r.vsMemory ? ratioText(r.vsMemory) : '-'}, CPU/ack receiver ${r.receiverUs.toFixed(1)} µs, store server ${r.storeUs?.toFixed(1) ?? '-'} µs`);
  } else {
    console.log('\nmeasuring SQLite put cost with 1 million keys (about a minute)');
    const putCost = JSON.parse(execFileSync(process.execPath, ['--expose-gc', new URL('inbox-putcost.mjs', import.meta.url).pathname, dir], { encoding: 'utf8' }).trim());
    const report = render(rows, putCost);
    console.log(`\n${report}`);
    if (!quick) writeFileSync(new URL('results/inboxes.md', import.meta.url), report);
  }
} finally {
  for (const { name } of SETUPS) await servers[name].handle.stop();
  await loadgen.stop();
  redis.child.kill('SIGTERM');
  postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}

function render(rows, putCost) {
  const target = { memory: '', sqlite: ' (target ≥ 0.8×)', redis: ' (target ≥ 0.5×)', postgres: '' };
  const lines = [
    '# Inboxes side by side (`npm run bench:inboxes`)',
    '',
    `node ${process.version}, ${config.connections} connections, ${config.rounds} rounds of ${config.seconds} s per run, medians. In each round every durable inbox's run`,
    'sits between two runs of the memory inbox (memory, SQLite, memory, Redis, memory, PostgreSQL, memory; odd rounds in reverse), and its ratio',
    'is to the mean of those two; an inbox\'s ratio is the median of its rounds\' ratios, with their range. The machine\'s speed',
    'drifts by up to 2× within a minute: the neighbouring runs see the same moments.',
    `Each receiver: node:http + createWebhooks({ inbox }), pinned to core 0; autocannon on core 1; redis-server and PostgreSQL ${redisCore() === undefined ? 'unpinned' : `on core ${redisCore()}${redisCore() === '1' ? ' (beside autocannon: this machine has no third core)' : ''}`},`,
    'AOF on (appendfsync everysec). A 200 is sent only after the commit. `receive`: `consume: false`, the deployment where',
    'workers run elsewhere (for Redis, the one docs/durable-delivery.md shows). `consume`: the same process also runs the handlers (its',
    'in-process worker, 16 at a time). The targets are on acknowledgements per second, as issue 11 sets them. A receiver',
    'that also handles may acknowledge faster than it handles: after each run it is given time to handle what it',
    'acknowledged, and "sustained" is acks over load time plus that time (the rate it could keep up for good). CPU per',
    'ack covers the same time, for the receiver process and for the store\'s server (redis-server; PostgreSQL\'s processes).',
    'PostgreSQL: a throw-away cluster with default settings (fsync on, synchronous_commit on: each put batch waits for its WAL flush).',
    '',
    '| inbox | process | acks/s | vs memory (range) | sustained acks/s | sustained vs memory | p50 ms | p99 ms | CPU µs/ack: receiver | store server | not 2xx | 200s sent | stored (≥ 200s) | handled |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const ratio = `${ratioText(r.vsMemory)}${target[r.kind]}`;
      const consume = r.mode === 'consume';
      const sustained = consume ? `${Math.round(r.sustained)} (+${r.drainSeconds.toFixed(1)} s)` : '';
      const sustainedRatio = consume ? ratioText(r.sustainedVsMemory) : '';
      const stored = r.stored === undefined ? 'not durable' : `${r.stored}${r.stored >= r.acks ? '' : ' **fewer than acknowledged**'}`;
      const storeUs = r.storeUs === undefined ? '' : r.storeUs.toFixed(1);
      return `| ${r.kind} | ${r.mode} | ${Math.round(r.rps)} | ${ratio} | ${sustained} | ${sustainedRatio} | ${r.p50} | ${r.p99} | ${r.receiverUs.toFixed(1)} | ${storeUs} | ${r.non2xx} | ${r.acks} | ${stored} | ${r.handled} |`;
    }),
    '',
    `SQLite \`put\` (groups of 64 per turn): ${putCost.emptyUs.toFixed(1)} µs with an empty window, ${putCost.millionUs.toFixed(1)} µs with 1 000 000 keys in the window: **${putCost.ratio.toFixed(2)}×** (target ≤ 2×).`,
    `Memory of that process after each further 20 000 puts (after GC): ${putCost.samples.map((s) => `${s.heapMb} MB heap / ${s.rssMb} MB RSS`).join(' → ')}.`,
    '',
    'Absolute figures depend on the machine (2 shared cores here); the ratios, measured side by side, carry over.',
    '',
  ];
  return lines.join('\n');
}
