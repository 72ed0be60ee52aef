/**
 * `npm run bench`: the micro suite (bench/micro.mjs, if present), then HTTP throughput of every adapter
 * side by side with the bare framework and with @octokit/webhooks, the Lambda adapter in process, memory
 * (RSS over 20 000 requests, per-request allocation) and, in a full run, a CPU profile of ours-node.
 *
 * Writes bench/results/http.json, latest.md, ratios.svg and profile.md. `BENCH_QUICK=1` for a ~1 minute run
 * (results then go to bench/results/quick/ so a quick run never overwrites the committed figures).
 * See bench/README.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { foreignCores, snapshot, waitForQuiet } from './lib/cpu.mjs';
import { canPin, exited, startChild, supervisedChild } from './lib/procs.mjs';
import { markdownReport, printTable, ratiosSvg } from './lib/report.mjs';
import { profileMarkdown, profileServer } from './profile.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const LAMBDA_TARGET = 0.5;
const config = QUICK
  ? { quick: true, warmupSeconds: 1, seconds: 2, rounds: 2, connections: 50, memoryWarmup: 12_000, memorySettle: 3_000, memoryRequests: 20_000, memoryStep: 1_000, lambdaSeconds: 1, lambdaRounds: 2, allocation: ['bare-node', 'ours-node'], memoryServers: ['ours-node', 'ours-express'], profile: false }
  : { quick: false, warmupSeconds: 2, seconds: 5, rounds: 3, connections: 50, memoryWarmup: 12_000, memorySettle: 3_000, memoryRequests: 20_000, memoryStep: 1_000, lambdaSeconds: 3, lambdaRounds: 3, allocation: null, memoryServers: null, profile: true };

const SERVER_CORE = 0;
const LOADGEN_CORE = 1;
const resultsDir = new URL(QUICK ? './results/quick/' : './results/', import.meta.url);

/** Pairs in the order they run; `octokit` runs in every round too. */
const PAIRS = [
  { id: 'node', bare: 'bare-node', ours: 'ours-node', module: 'chat-webhooks/node', adapter: 'nodeMiddleware', bareLabel: 'bare node:http + JSON.parse' },
  { id: 'fastify', bare: 'bare-fastify', ours: 'ours-fastify', module: 'chat-webhooks/fastify', adapter: 'fastifyWebhooks', bareLabel: 'bare Fastify 5 route' },
  { id: 'express', bare: 'bare-express', ours: 'ours-express', module: 'chat-webhooks/express', adapter: 'expressMiddleware', bareLabel: 'bare Express 5 + express.json()' },
  { id: 'fetch', bare: 'bare-fetch', ours: 'ours-fetch', module: 'chat-webhooks/fetch', adapter: 'fetchHandler', bareLabel: 'bare fetch handler (same node:http bridge)' },
];
const TARGET_VS_BARE = { node: 0.85, fastify: 0.85, express: 1.0 };
const TARGET_VS_OCTOKIT = 2.0;
const FLAT_RSS_MB = 5;
/** A run during which other processes used more than this many cores is repeated (within a budget). */
const DISTURBED_CORES = 0.2;

const log = (...args) => console.log(...args);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (value, digits = 0) => (value === null || value === undefined ? value : Number(value.toFixed(digits)));

/** The commit measured, and whether the library's sources differed from it when dist/ was built. */
function gitInfo() {
  const git = (...args) => spawnSync('git', args, { encoding: 'utf8', cwd: fileURLToPath(new URL('../', import.meta.url)) }).stdout?.trim() ?? '';
  const commit = git('rev-parse', 'HEAD');
  if (!commit) return null;
  const dirty = git('status', '--porcelain', '--', 'src', 'adapters').split('\n').filter(Boolean);
  return { commit, subject: git('log', '-1', '--format=%s'), uncommittedLibraryChanges: dirty };
}

/** Starts a server; retries a start that failed (another build may be replacing dist/ at that moment). */
async function startServer(name, options) {
  for (let attempt = 1; ; attempt++) {
    const handle = startChild('servers.mjs', [name, '0'], options);
    try {
      const { port } = await handle.ready;
      handle.port = port;
      handle.kind = name === 'octokit' ? 'octokit' : 'chat';
      return handle;
    } catch (error) {
      if (attempt >= 3) throw error;
      log(`  ${name} failed to start (${error.message}); retrying`);
      await sleep(2000);
    }
  }
}

/**
 * Runs `task`; if it fails (typically because a child process was ended from outside), calls `repair` and
 * tries again, twice at most.
 */
async function withRetry(label, task, repair = async () => {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await task();
    } catch (error) {
      if (attempt >= 3) throw error;
      log(`  ${label} failed (${error.message}); retrying`);
      await sleep(1000);
      await repair();
    }
  }
}

async function moduleAvailable(specifier) {
  try {
    await import(specifier);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Micro suite

/** Runs a bench script in its own node process, its output on ours: its exit code (or signal) and seconds. */
async function runScript(file) {
  const start = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(file)], { stdio: 'inherit' });
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? signal));
    child.on('error', () => resolve('spawn failed'));
  });
  return { code, seconds: round((performance.now() - start) / 1000, 1) };
}

async function runMicro() {
  const file = new URL('./micro.mjs', import.meta.url);
  if (process.env.BENCH_SKIP_MICRO === '1') {
    log('BENCH_SKIP_MICRO=1: skipping the micro suite.\n');
    return { ran: false, skipped: true };
  }
  if (!existsSync(file)) {
    log('bench/micro.mjs not present: skipping the micro suite.\n');
    return { ran: false };
  }
  log('== micro suite (bench/micro.mjs) ==');
  const { code, seconds } = await runScript(file);
  log(`micro suite finished (${code === 0 ? 'ok' : `exit ${code}`}, ${seconds} s)\n`);
  return { ran: true, exitCode: code, seconds };
}

/** The inboxes side by side (bench/inboxes.mjs, issue 11's targets), in its own process after the rest. */
async function runInboxes() {
  if (process.env.BENCH_SKIP_INBOXES === '1') {
    log('BENCH_SKIP_INBOXES=1: skipping the inbox benchmark.\n');
    return { ran: false, skipped: true };
  }
  log('== inboxes side by side (bench/inboxes.mjs) ==');
  const { code, seconds } = await runScript(new URL('./inboxes.mjs', import.meta.url));
  log(`inbox benchmark finished (${code === 0 ? 'ok' : `exit ${code}`}, ${seconds} s)\n`);
  return { ran: true, exitCode: code, seconds };
}

// ---------------------------------------------------------------------------------------------------------
// HTTP throughput

/** Runs autocannon once against a server and gathers the server-side figures around it. */
async function measureRun(server, loadgen, { seconds, amount, connections, pids }) {
  const before = (await server.call({ type: 'stats' })).stats;
  const cpuBefore = snapshot(pids);
  const reply = await loadgen.call({ type: 'run', port: server.port, kind: server.kind, connections, ...(amount ? { amount } : { duration: seconds }) });
  const cpuAfter = snapshot(pids);
  if (reply.error) throw new Error(`load generator: ${reply.error}`);
  // Handlers run after the answer (next tick): let the last ones finish before counting.
  await sleep(150);
  const after = (await server.call({ type: 'stats' })).stats;
  const r = reply.result;
  // Active event-loop time over the run's own duration (the stats window also holds idle set-up time).
  const activeMs = after.elu.active - before.elu.active;
  const serverCpuMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
  return {
    rps: r.rps,
    ok: r.ok,
    non2xx: r.non2xx,
    statusCodes: r.statusCodes,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: r.duration,
    latencyMs: r.latency,
    handlerCalls: after.calls - before.calls,
    receiverErrors: after.errors - before.errors,
    receiverErrorCodes: diffCounts(after.errorCodes, before.errorCodes),
    serverCpuUsPerRequest: r.ok ? (serverCpuMs * 1000) / r.ok : null,
    serverEventLoopUtilization: Math.min(1, activeMs / (r.duration * 1000)),
    loadgenCpu: r.loadgenCpu,
    foreignCores: foreignCores(cpuBefore, cpuAfter),
  };
}

function diffCounts(after = {}, before = {}) {
  const out = {};
  for (const [key, value] of Object.entries(after)) if (value - (before[key] ?? 0)) out[key] = value - (before[key] ?? 0);
  return out;
}

/** Every 2xx had exactly one handler call: calls − 2xx is 0, or at most the connections in flight at the stop. */
function handlerCheck(name, runs, connections, exact = false) {
  const ok = runs.reduce((sum, run) => sum + run.ok, 0);
  const calls = runs.reduce((sum, run) => sum + run.handlerCalls, 0);
  const non2xx = runs.reduce((sum, run) => sum + run.non2xx + run.errors + run.timeouts, 0);
  const receiverErrors = runs.reduce((sum, run) => sum + (run.receiverErrors ?? 0), 0);
  const slack = exact ? 0 : connections * runs.length;
  const extra = calls - ok;
  const passed = non2xx === 0 && extra >= 0 && extra <= slack && receiverErrors === 0;
  return {
    server: name,
    ok,
    handlerCalls: calls,
    non2xxOrErrors: non2xx,
    receiverErrors,
    inFlightAtStop: extra,
    allowedInFlight: slack,
    passed,
  };
}

async function runHttp(loadgen, available) {
  const names = [];
  for (const pair of PAIRS) if (available[pair.id]) names.push(pair.bare, pair.ours);
  names.push('octokit');

  log(`== HTTP: ${names.length} servers, ${config.rounds} rounds × ${config.seconds} s after a ${config.warmupSeconds} s warm-up, ${config.connections} connections ==`);
  const servers = {};
  for (const name of names) {
    servers[name] = await startServer(name, { core: SERVER_CORE });
  }
  const pids = () => [process.pid, loadgen.child?.pid, ...Object.values(servers).map((s) => s.child.pid)].filter(Boolean);
  const warm = (name) =>
    loadgen.call({ type: 'run', port: servers[name].port, kind: servers[name].kind, connections: config.connections, duration: config.warmupSeconds });
  // A server ended from outside is started again and warmed up; the load generator restarts by itself.
  const repair = async () => {
    for (const name of names) {
      if (!exited(servers[name])) continue;
      servers[name] = await startServer(name, { core: SERVER_CORE });
      await warm(name);
      restarted.push(name);
    }
  };
  const restarted = [];
  // A quick run neither waits for quiet nor repeats disturbed runs: it only reports the disturbance.
  let retryBudgetMs = QUICK ? 0 : 25_000;
  try {
    for (const name of names) {
      if (!QUICK) await waitForQuiet(pids(), { maxWaitMs: 3000 });
      await withRetry(`warm-up of ${name}`, () => warm(name), repair);
      log(`  warmed ${name}`);
    }
    const runs = Object.fromEntries(names.map((name) => [name, []]));
    for (let r = 0; r < config.rounds; r++) {
      // Alternate who goes first in each pair and the order of the pairs, so drift hits both sides alike.
      const groups = PAIRS.filter((pair) => available[pair.id]).map((pair) => (r % 2 ? [pair.ours, pair.bare] : [pair.bare, pair.ours]));
      groups.push(['octokit']);
      if (r % 2) groups.reverse();
      for (const name of groups.flat()) {
        // Other processes on the machine steal the pinned cores: wait for quiet, and repeat a run that was
        // disturbed anyway (within a time budget), keeping the least disturbed attempt.
        let run;
        for (let attempt = 1; ; attempt++) {
          const quiet = QUICK ? { waitedMs: 0 } : await waitForQuiet(pids(), { maxWaitMs: retryBudgetMs > 0 ? 5000 : 0 });
          retryBudgetMs -= quiet.waitedMs;
          const candidate = await withRetry(
            `round ${r + 1} ${name}`,
            () => measureRun(servers[name], loadgen, { seconds: config.seconds, connections: config.connections, pids: pids() }),
            repair,
          );
          candidate.quietWaitMs = quiet.waitedMs;
          candidate.attempt = attempt;
          if (!run || (candidate.foreignCores ?? 0) < (run.foreignCores ?? 0)) run = candidate;
          if ((run.foreignCores ?? 0) < DISTURBED_CORES || attempt >= 3 || retryBudgetMs <= 0) break;
          retryBudgetMs -= config.seconds * 1000;
          log(`  round ${r + 1} ${name}: others used ${candidate.foreignCores.toFixed(2)} cores during the run; repeating it`);
        }
        run.round = r + 1;
        runs[name].push(run);
        const foreign = run.foreignCores === null ? '' : `, others used ${run.foreignCores.toFixed(2)} cores`;
        log(
          `  round ${r + 1} ${name.padEnd(13)} ${Math.round(run.rps).toLocaleString('en-US').padStart(7)} req/s` +
            `  ${run.serverCpuUsPerRequest?.toFixed(1)} µs CPU/req, server busy ${(run.serverEventLoopUtilization * 100).toFixed(0)}%` +
            `, load generator ${(run.loadgenCpu * 100).toFixed(0)}% CPU${foreign}`,
        );
      }
    }
    return { names, runs, restarted, loadgenRestarts: loadgen.restarts };
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
  }
}

function summarize(runs) {
  const rps = runs.map((run) => run.rps);
  return {
    median: median(rps),
    min: Math.min(...rps),
    max: Math.max(...rps),
    rounds: rps.map((value) => round(value)),
    cpuUsPerRequest: median(runs.map((run) => run.serverCpuUsPerRequest)),
    serverBusy: median(runs.map((run) => run.serverEventLoopUtilization)),
    loadgenCpu: median(runs.map((run) => run.loadgenCpu)),
    latencyP50: median(runs.map((run) => run.latencyMs.p50)),
    latencyP99: median(runs.map((run) => run.latencyMs.p99)),
    foreignCoresMax: runs.some((run) => run.foreignCores === null) ? null : Math.max(...runs.map((run) => run.foreignCores)),
  };
}

/** Ratio of medians, and the spread of the ratios of each round's side-by-side pair. */
function ratio(numerator, denominator, target, label, kind) {
  if (!numerator || !denominator) return null;
  const perRound = numerator.runs.map((run, i) => run.rps / denominator.runs[i].rps);
  const value = numerator.summary.median / denominator.summary.median;
  return {
    label,
    kind,
    value,
    // Requests per CPU-second of the server process, ours relative to the other: independent of the load generator.
    cpuRatio: denominator.summary.cpuUsPerRequest / numerator.summary.cpuUsPerRequest,
    perRoundMin: Math.min(...perRound),
    perRoundMax: Math.max(...perRound),
    target,
    met: target === null ? null : value >= target,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Lambda

async function runLambda() {
  log(`== Lambda: in-process invocations/s, ${config.lambdaRounds} rounds × ${config.lambdaSeconds} s ==`);
  const args = ['--rounds', String(config.lambdaRounds), '--duration', String(config.lambdaSeconds), '--warmup', '1'];
  const script = fileURLToPath(new URL('./lambda.mjs', import.meta.url));
  const command = [process.execPath, script, ...args];
  const pinned = canPin();
  const output = await new Promise((resolve, reject) => {
    const child = spawn(pinned ? 'taskset' : command[0], pinned ? ['-c', String(SERVER_CORE), ...command] : command.slice(1), {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`lambda.mjs exited ${code}`))));
  });
  const data = JSON.parse(output.trim().split('\n').pop());
  const summary = {};
  for (const name of ['bare', 'ours']) {
    const values = data.rounds[name].map((r) => r.perSecond);
    summary[name] = { median: median(values), min: Math.min(...values), max: Math.max(...values), rounds: values.map((v) => round(v)) };
    summary[name].usPerInvocation = 1e6 / summary[name].median;
    log(`  ${name === 'bare' ? 'bare handler (JSON.parse)' : 'lambdaHandler'}: ${Math.round(summary[name].median).toLocaleString('en-US')} invocations/s (${summary[name].usPerInvocation.toFixed(1)} µs each)`);
  }
  const perRound = data.rounds.ours.map((r, i) => r.perSecond / data.rounds.bare[i].perSecond);
  const { ours } = data.checks;
  const oursOk = ours.statuses['200'] ?? 0;
  return {
    rounds: data.rounds,
    summary,
    // Issue 10's target is at most twice the bare handler's µs per invocation: at least half its invocations/s.
    ratio: {
      label: 'lambdaHandler / bare Lambda handler (invocations/s; 0.5x = twice the µs per invocation)',
      kind: 'bare',
      value: summary.ours.median / summary.bare.median,
      perRoundMin: Math.min(...perRound),
      perRoundMax: Math.max(...perRound),
      target: LAMBDA_TARGET,
      met: summary.ours.median / summary.bare.median >= LAMBDA_TARGET,
    },
    check: {
      server: 'ours-lambda',
      ok: oursOk,
      handlerCalls: ours.handlerCalls,
      non2xxOrErrors: ours.invocations - oursOk,
      receiverErrors: ours.errors,
      inFlightAtStop: ours.handlerCalls - oursOk,
      allowedInFlight: 0,
      passed: ours.handlerCalls === oursOk && ours.invocations === oursOk && ours.errors === 0,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Memory: RSS over 20 000 requests; per-request allocation

const MB = 1024 * 1024;

/**
 * RSS over `memoryRequests` requests on a fresh server: warm-up (fills the dedupe window and lets V8 size its
 * heap), a forced GC for the retained-heap baseline, a settle batch (the young generation grows back after the
 * GC), then one run of `memoryRequests` during which the server itself records process.memoryUsage() every
 * `memoryStep` handler calls (BENCH_SAMPLE_EVERY). RSS is a sawtooth under load (the heap grows until a
 * major GC), so besides "end − start" the test compares the peak of the second half of the samples with the
 * peak of the first half: a leak raises the later peaks, a sawtooth does not.
 */
async function runMemory(loadgen, name) {
  const server = await startServer(name, { core: SERVER_CORE, nodeArgs: ['--expose-gc'], env: { BENCH_SAMPLE_EVERY: String(config.memoryStep) } });
  await loadgen.ensure();
  const pids = [process.pid, loadgen.child.pid, server.child.pid];
  const mb = (bytes) => round(bytes / MB, 2);
  try {
    const batches = [];
    batches.push(await measureRun(server, loadgen, { amount: config.memoryWarmup, connections: config.connections, pids }));
    const gcAfterWarmup = (await server.call({ type: 'gc' })).stats;
    batches.push(await measureRun(server, loadgen, { amount: config.memorySettle, connections: config.connections, pids }));
    await server.call({ type: 'samples' }); // drop the warm-up's samples
    const startStats = (await server.call({ type: 'stats' })).stats;
    const first = startStats.calls;
    batches.push(await measureRun(server, loadgen, { amount: config.memoryRequests, connections: config.connections, pids }));
    const samples = (await server.call({ type: 'samples' })).samples.map((s) => ({
      requests: s.calls - first,
      rssMB: mb(s.rss),
      heapUsedMB: mb(s.heapUsed),
      heapTotalMB: mb(s.heapTotal),
      externalMB: mb(s.external),
    }));
    const gcEnd = (await server.call({ type: 'gc' })).stats;
    const rss = samples.map((s) => s.rssMB);
    const half = Math.floor(rss.length / 2);
    const peakGrowth = Math.max(...rss.slice(half)) - Math.max(...rss.slice(0, half));
    const start = mb(startStats.memory.rss);
    const growth = samples.at(-1).rssMB - start;
    const heapGrowth = (gcEnd.memory.heapUsed - gcAfterWarmup.memory.heapUsed) / MB;
    const check = handlerCheck(name, batches, config.connections, true);
    const result = {
      server: name,
      warmupRequests: config.memoryWarmup + config.memorySettle,
      requests: config.memoryRequests,
      sampleEvery: config.memoryStep,
      rssAfterWarmupMB: start,
      rssEndMB: samples.at(-1).rssMB,
      rssMinMB: Math.min(...rss),
      rssMaxMB: Math.max(...rss),
      rssGrowthMB: round(growth, 2),
      rssPeakGrowthMB: round(peakGrowth, 2),
      heapAfterGcWarmupMB: mb(gcAfterWarmup.memory.heapUsed),
      heapAfterGcEndMB: mb(gcEnd.memory.heapUsed),
      heapAfterGcGrowthMB: round(heapGrowth, 2),
      flat: peakGrowth < FLAT_RSS_MB && heapGrowth < 1,
      samples,
      check,
    };
    log(
      `  ${name}: RSS ${result.rssAfterWarmupMB} MB after ${result.warmupRequests} warm-up requests → ${result.rssEndMB} MB after ${config.memoryRequests} more ` +
        `(${samples.length} samples, min ${result.rssMinMB}, max ${result.rssMaxMB}, later peaks ${result.rssPeakGrowthMB >= 0 ? '+' : ''}${result.rssPeakGrowthMB} MB); ` +
        `heap after GC ${result.heapAfterGcWarmupMB} → ${result.heapAfterGcEndMB} MB: ${result.flat ? 'flat' : 'GROWING'}` +
        `; handler calls ${check.handlerCalls} = 2xx ${check.ok}: ${check.passed ? 'ok' : 'MISMATCH'}`,
    );
    return result;
  } finally {
    await server.stop();
  }
}

/**
 * Allocation per request: a server started with a 256 MB young generation (no scavenge for a few thousand
 * requests) and GC counting. After a warm-up, for two batch sizes: gc(), read heapUsed, send the batch, read
 * heapUsed again with no GC in between (checked). (Δheap₂ − Δheap₁) / (n₂ − n₁) cancels what each batch costs
 * once (its 10 connections, autocannon's setup), leaving bytes allocated on the JS heap per request. Buffers'
 * backing stores (socket reads) live outside the heap and are reported apart (external + arrayBuffers).
 */
async function runAllocation(loadgen, name) {
  const kind = name === 'octokit' ? 'octokit' : 'chat';
  const server = await startServer(name, {
    core: SERVER_CORE,
    nodeArgs: ['--expose-gc', '--min-semi-space-size=256', '--max-semi-space-size=256'],
    env: { BENCH_COUNT_GC: '1' },
  });
  const { port } = server;
  const connections = 10;
  try {
    await loadgen.call({ type: 'run', port, kind, connections, amount: 5_000 });
    const batch = async (amount) => {
      await server.call({ type: 'gc' });
      await sleep(50);
      const before = (await server.call({ type: 'stats' })).stats;
      await loadgen.call({ type: 'run', port, kind, connections, amount });
      await sleep(150);
      const after = (await server.call({ type: 'stats' })).stats;
      return {
        amount,
        heap: after.memory.heapUsed - before.memory.heapUsed,
        external: after.memory.external + after.memory.arrayBuffers - before.memory.external - before.memory.arrayBuffers,
        gcRuns: after.gcRuns - before.gcRuns,
      };
    };
    let small = 500;
    let large = 2500;
    for (let attempt = 0; attempt < 4; attempt++) {
      const a = await batch(small);
      const b = await batch(large);
      if (a.gcRuns === 0 && b.gcRuns === 0) {
        const heapPerRequest = (b.heap - a.heap) / (large - small);
        const externalPerRequest = (b.external - a.external) / (large - small);
        log(`  ${name}: ${(heapPerRequest / 1024).toFixed(1)} KB JS heap + ${(externalPerRequest / 1024).toFixed(1)} KB external per request`);
        return { server: name, heapBytesPerRequest: Math.round(heapPerRequest), externalBytesPerRequest: Math.round(externalPerRequest), batches: [a, b] };
      }
      small = Math.floor(small / 2);
      large = Math.floor(large / 2);
    }
    return { server: name, heapBytesPerRequest: null, note: 'a GC ran inside every measured batch' };
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main() {
  const started = new Date();
  const t0 = performance.now();
  const pinning = canPin();
  const git = gitInfo();
  log(`chat-webhooks benchmarks${QUICK ? ' (BENCH_QUICK=1)' : ''}: node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}`);
  log(
    pinning
      ? `servers pinned to core ${SERVER_CORE}, load generator to core ${LOADGEN_CORE} (taskset)\n`
      : 'NOT pinned (taskset missing or fewer than 2 cores): server and load generator share the CPUs; figures are noisier\n',
  );

  const micro = await runMicro();

  const available = {};
  for (const pair of PAIRS) {
    available[pair.id] = await moduleAvailable(pair.module);
    if (!available[pair.id]) log(`${pair.module} is not built (adapter missing from dist/): skipping ${pair.ours} and ${pair.bare}`);
  }
  const lambdaAvailable = await moduleAvailable('chat-webhooks/lambda');

  const loadgen = supervisedChild('loadgen.mjs', [], { core: LOADGEN_CORE });
  await loadgen.ensure();
  let http;
  let lambda = null;
  const memory = [];
  const allocation = [];
  let profile = null;
  const phases = {};
  try {
    const phase = (name, since) => (phases[name] = round((performance.now() - since) / 1000, 1));
    let since = performance.now();
    http = await runHttp(loadgen, available);
    phase('http', since);
    since = performance.now();
    log('');
    if (lambdaAvailable) lambda = await runLambda();
    else log('chat-webhooks/lambda is not built: skipping the Lambda benchmark');
    phase('lambda', since);
    since = performance.now();
    log('');

    log(`== memory: RSS every ${config.memoryStep} requests over ${config.memoryRequests} requests after ${config.memoryWarmup + config.memorySettle} warm-up requests (fresh servers) ==`);
    const memoryServers = (config.memoryServers ?? PAIRS.map((p) => p.ours)).filter((name) => available[PAIRS.find((p) => p.ours === name).id]);
    for (const name of memoryServers) memory.push(await withRetry(`memory run of ${name}`, () => runMemory(loadgen, name)));
    phase('memory', since);
    since = performance.now();
    log('');
    log('== allocation per request (JS heap, no GC inside the measured batches) ==');
    const allocationServers = config.allocation ?? [...http.names];
    for (const name of allocationServers) allocation.push(await withRetry(`allocation run of ${name}`, () => runAllocation(loadgen, name)));
    phase('allocation', since);
    since = performance.now();
    log('');
    if (config.profile) {
      log('== CPU profile of ours-node (node --cpu-prof) ==');
      profile = await withRetry('CPU profile', () => profileServer({ loadgen, server: 'ours-node', kind: 'chat', warmupSeconds: config.warmupSeconds, seconds: config.seconds, core: SERVER_CORE }));
      log(profileMarkdown(profile));
      phase('profile', since);
    }
  } finally {
    await loadgen.stop();
  }

  // ---- figures ----
  const { names, runs } = http;
  const servers = Object.fromEntries(names.map((name) => [name, { runs: runs[name], summary: summarize(runs[name]) }]));
  const octokit = servers.octokit;
  const ratios = [];
  const rows = [];
  const checks = [];
  for (const pair of PAIRS) {
    if (!available[pair.id]) continue;
    const ours = servers[pair.ours];
    const bare = servers[pair.bare];
    const vsBare = ratio(ours, bare, TARGET_VS_BARE[pair.id] ?? null, `${pair.adapter} / ${pair.bareLabel}`, 'bare');
    const vsOctokit = ratio(ours, octokit, TARGET_VS_OCTOKIT, `${pair.adapter} / octokit createNodeMiddleware`, 'octokit');
    const bareVsOctokit = ratio(bare, octokit, null, `${pair.bareLabel} / octokit`, 'octokit');
    for (const r of [vsBare, vsOctokit]) if (r) r.server = pair.ours;
    ratios.push(vsBare, vsOctokit);
    rows.push({ name: pair.bare, label: pair.bareLabel, summary: bare.summary, unit: 'req/s', vsBare: null, vsOctokit: bareVsOctokit });
    rows.push({ name: pair.ours, label: `${pair.adapter} (${pair.module})`, summary: ours.summary, unit: 'req/s', vsBare, vsOctokit });
    checks.push(handlerCheck(pair.ours, ours.runs, config.connections));
  }
  rows.push({ name: 'octokit', label: '@octokit/webhooks createNodeMiddleware (HMAC-SHA256)', summary: octokit.summary, unit: 'req/s', vsBare: null, vsOctokit: null });
  checks.push(handlerCheck('octokit', octokit.runs, config.connections));
  if (lambda) {
    rows.push({ name: 'bare-lambda', label: 'bare Lambda handler (JSON.parse), in process', summary: lambda.summary.bare, unit: 'inv/s', vsBare: null, vsOctokit: null });
    rows.push({ name: 'ours-lambda', label: 'lambdaHandler (chat-webhooks/lambda), in process', summary: lambda.summary.ours, unit: 'inv/s', vsBare: lambda.ratio, vsOctokit: null });
    ratios.push(lambda.ratio);
    checks.push(lambda.check);
  }
  const memoryTargets = memory.map((m) => ({
    label: `${m.server} RSS over ${m.requests} requests after warm-up`,
    kind: 'memory',
    value: m.rssPeakGrowthMB,
    target: FLAT_RSS_MB,
    met: m.flat,
  }));

  const result = {
    date: started.toISOString(),
    durationSeconds: round((performance.now() - t0) / 1000, 1),
    phaseSeconds: { micro: micro.seconds ?? 0, ...phases },
    git,
    node: process.version,
    v8: process.versions.v8,
    machine: {
      platform: `${os.platform()} ${os.release()}`,
      arch: os.arch(),
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      totalMemoryGB: round(os.totalmem() / 1024 ** 3, 1),
      pinned: pinning ? { server: SERVER_CORE, loadGenerator: LOADGEN_CORE } : false,
    },
    versions: await dependencyVersions(),
    config,
    body: { chat: 'fixtures/message_sent.json, compact JSON (~950 bytes), message id made unique per request, Basic auth header', octokit: 'bench/fixtures/github-issue_comment.json, compact JSON (~960 bytes), comment id unique per request, x-hub-signature-256 / x-github-event / x-github-delivery' },
    micro,
    interruptions: { serversRestarted: http.restarted, loadGeneratorRestarts: loadgen.restarts },
    servers,
    ratios: ratios.filter(Boolean),
    checks,
    lambda,
    memory,
    allocation,
    memoryTargets,
    profile,
  };

  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(new URL('http.json', resultsDir), `${JSON.stringify(result, null, 2)}\n`);
  const markdown = markdownReport(result, rows);
  writeFileSync(new URL('latest.md', resultsDir), markdown);
  writeFileSync(new URL('ratios.svg', resultsDir), ratiosSvg(result));
  if (profile) writeFileSync(new URL('profile.md', resultsDir), `${profileMarkdown(profile)}`);

  log('');
  printTable(result, rows);
  log(`\nWrote ${fileURLToPath(resultsDir)}{http.json,latest.md,ratios.svg${profile ? ',profile.md' : ''}} in ${result.durationSeconds} s\n`);
  const inboxes = await runInboxes();
  if (inboxes.ran && inboxes.exitCode !== 0) process.exitCode = 1;
}

async function dependencyVersions() {
  const { readFileSync } = await import('node:fs');
  const versions = {};
  for (const name of ['autocannon', 'fastify', 'express', '@octokit/webhooks', 'zod']) {
    try {
      versions[name] = JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
    } catch {
      versions[name] = null;
    }
  }
  return versions;
}

await main();
