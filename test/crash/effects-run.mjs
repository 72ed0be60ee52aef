// The effects crash run of issue 36, shared by test/crash/exactly-once.test.ts (small) and
// bench/exactly-once.mjs (the full "Checked by" run): two receivers and two workers as processes
// (effects-process.mjs) on one PostgreSQL database, the workers' handlers inserting an effect row per run and
// throwing after the insert on some first attempts; a worker SIGKILLed at a quarter of the effects (and
// started again), PostgreSQL crashed (`pg_ctl -m immediate`) and started at half, the other worker SIGKILLed
// at three quarters. Then every acknowledged event should have exactly one effect row.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const script = fileURLToPath(new URL('effects-process.mjs', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let databases = 0;
/** Processes that ended without being killed by the run (a crash of theirs), with the end of their stderr. */
const unexpected = [];

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts one process and resolves once it printed "ready". */
async function start(env) {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk.toString()));
  const proc = { child, exited: undefined, killing: false };
  proc.exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', (code, signal) => {
    if (!proc.killing) unexpected.push(`${env.ROLE} exited by itself (${code ?? signal}): ${output.slice(-500)}`);
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${env.ROLE} did not start:\n${output}`)), 30_000);
    child.stdout.on('data', (chunk) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${env.ROLE} exited with ${code} before it was ready:\n${output}`)));
  });
  return proc;
}

async function kill(proc) {
  proc.killing = true;
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  await proc.exited;
}

/** A fresh database of the server at `url`, with the effects table (no unique constraint: doubles stay). */
async function freshDatabase(url, mode) {
  const name = `eo_${mode}_${process.pid}_${Date.now().toString(36)}_${++databases}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const dbUrl = url.replace(/\/[^/]*$/, `/${name}`);
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  await client.query('CREATE TABLE effects (id int NOT NULL, attempt int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())');
  await client.end();
  return dbUrl;
}

/** Connections for the run's own queries, by URL: one each, opened again after the server crashed. */
const askers = new Map();

/** One query; undefined while the server is down (the run crashes it). */
async function ask(url, text) {
  try {
    if (!askers.has(url)) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      client.on('error', () => undefined);
      askers.set(url, client.connect().then(() => client));
    }
    return (await (await askers.get(url)).query(text)).rows;
  } catch {
    const client = await askers.get(url)?.catch(() => undefined);
    askers.delete(url);
    await client?.end().catch(() => undefined);
    return undefined;
  }
}

async function endAsker(url) {
  const client = await askers.get(url)?.catch(() => undefined);
  askers.delete(url);
  await client?.end().catch(() => undefined);
}

const body = (id) =>
  JSON.stringify({ trigger: 'message_sent', appId: 'app', webhook: 'wh_effects', data: { message: { id: String(id), conversationId: 'c', sender: 'u1', receiver: 'u2', receiverType: 'user', type: 'text', category: 'message', data: { text: `message ${id}` }, sentAt: 1763700000 } } });

/**
 * Sends ids 0..count-1 from 50 senders, each again (to the other receiver) until it was answered 200; id n
 * not before n / perSecond seconds, so that the run's kills and crash land while events still arrive.
 */
async function sendAll(count, ports, perSecond = Infinity) {
  const acked = new Set();
  const startedAt = Date.now();
  let next = 0;
  let resent = 0;
  async function sender() {
    while (next < count) {
      const id = next++;
      const due = startedAt + (id * 1000) / perSecond;
      if (due > Date.now()) await sleep(due - Date.now());
      for (let attempt = 0; ; attempt++) {
        const port = ports[(id + attempt) % ports.length];
        const status = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(id) }).then(
          async (response) => (await response.arrayBuffer(), response.status),
          () => 0,
        );
        if (status === 200) break;
        resent++;
        await sleep(Math.min(500, 20 * (attempt + 1)));
      }
      acked.add(id);
    }
  }
  await Promise.all(Array.from({ length: 50 }, sender));
  return { acked, resent };
}

/**
 * The run. `server`: `{ url, crash() }` (crash: `pg_ctl -m immediate` stop, then start). `mode`: 'transaction'
 * (the handler writes through context.transaction) or 'own' (through a pool of its own). Resolves the figures.
 */
export async function effectsRun({ server, events, mode, concurrency = 8, perSecond = 200, timeoutMs = 120_000 }) {
  const url = await freshDatabase(server.url, mode);
  const base = { POSTGRES_URL: url, MODE: mode, CONCURRENCY: String(concurrency), LEASE_MS: '2000', POLL_MS: '200', FAIL_PERCENT: '3' };
  const ports = [await freePort(), await freePort()];
  // The schema is made by the first process; two making it at once wait on its advisory lock.
  const receivers = await Promise.all(ports.map((port) => start({ ...base, ROLE: 'receiver', PORT: String(port) })));
  const workers = [await start({ ...base, ROLE: 'worker' }), await start({ ...base, ROLE: 'worker' })];
  const startedAt = Date.now();
  const marks = {};
  unexpected.length = 0;
  const sending = sendAll(events, ports, perSecond);
  let sent;
  void sending.then((result) => (sent = result));
  const restarts = [];
  // The killed worker starts again in the background: the other one works on meanwhile, and the run goes on.
  const killWorker = async (n) => {
    await kill(workers[n]);
    restarts.push(start({ ...base, ROLE: 'worker' }).then((proc) => (workers[n] = proc)));
  };
  const steps = [
    [0.25, 'killedFirstWorkerAt', () => killWorker(0)],
    [0.5, 'crashedPostgresAt', () => server.crash()],
    [0.75, 'killedSecondWorkerAt', () => killWorker(1)],
  ];
  try {
    for (;;) {
      if (Date.now() - startedAt > timeoutMs) throw new Error(`The ${mode} run did not finish in ${timeoutMs} ms: ${JSON.stringify(marks)}`);
      const rows = await ask(url, `SELECT (SELECT count(DISTINCT id) FROM effects)::int AS effects,
        (SELECT count(*) FROM chat_webhooks.inbox WHERE state IN (0, 1))::int AS open`);
      const progress = rows?.[0];
      if (progress && steps.length > 0 && progress.effects >= events * steps[0][0]) {
        const [, name, step] = steps.shift();
        marks[name] = progress.effects;
        await step();
        marks[`${name}Ms`] = Date.now() - startedAt;
        continue;
      }
      if (sent && steps.length === 0 && progress?.open === 0 && restarts.length === 2) break;
      if (sent && !marks.sentMs) marks.sentMs = Date.now() - startedAt;
      await sleep(100);
    }
    const elapsedMs = Date.now() - startedAt;
    // A last look after the queue emptied: nothing still running may add a row.
    await sleep(300);
    return { mode, events, ...marks, elapsedMs, ...(await tallyOf(url, sent)), unexpectedExits: [...unexpected] };
  } finally {
    await endAsker(url);
    await Promise.allSettled(restarts);
    await Promise.all([...workers, ...receivers].map(kill));
  }
}

async function tallyOf(url, { acked, resent }) {
  const perId = await ask(url, 'SELECT id, count(*)::int AS n FROM effects GROUP BY id');
  const counts = new Map(perId.map((row) => [row.id, row.n]));
  let missing = 0;
  for (const id of acked) if (!counts.has(id)) missing++;
  const doubled = [...counts.values()].filter((n) => n > 1);
  const [inbox] = await ask(url, `SELECT count(*) FILTER (WHERE attempts > 1)::int AS "ranAgain", count(*) FILTER (WHERE state = 3)::int AS dead,
    count(*)::int AS stored FROM chat_webhooks.inbox`);
  return {
    acknowledged: acked.size,
    effectRows: [...counts.values()].reduce((sum, n) => sum + n, 0),
    exactlyOne: [...counts.values()].filter((n) => n === 1).length,
    missing,
    doubledEvents: doubled.length,
    extraRows: doubled.reduce((sum, n) => sum + n - 1, 0),
    ...inbox,
    resent,
  };
}

/**
 * SIGKILL → re-run: two workers; one event whose first run hangs; the worker running it is killed and the
 * time until the other starts it again is measured. `leaseMs`: the workers' lease (what a crash waits for
 * without a transaction). Resolves milliseconds.
 */
export async function rerunAfterKill({ server, mode, leaseMs, dir }) {
  const url = await freshDatabase(server.url, mode);
  const starts = join(dir, `starts-${mode}-${Date.now().toString(36)}.txt`);
  const base = { POSTGRES_URL: url, MODE: mode, CONCURRENCY: '2', LEASE_MS: String(leaseMs), HANG_ID: '7', STARTS: starts };
  const port = await freePort();
  const procs = [await start({ ...base, ROLE: 'receiver', PORT: String(port) })];
  procs.push(await start({ ...base, ROLE: 'worker' }), await start({ ...base, ROLE: 'worker' }));
  const lines = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ').map(Number)) : []);
  try {
    await sendAll(8, [port]);
    while (lines().length === 0) await sleep(10);
    // Killed well after its claim: the short lease of a transaction's claim has long run out by then.
    await sleep(3000);
    const [[, , pid]] = lines();
    const killedAt = Date.now();
    await kill(procs.find((proc) => proc.child.pid === pid));
    const deadline = killedAt + leaseMs + 30_000;
    while (lines().length < 2 && Date.now() < deadline) await sleep(5);
    const again = lines()[1];
    if (!again) throw new Error(`${mode}: not run again within ${leaseMs + 30_000} ms`);
    return again[3] - killedAt;
  } finally {
    await Promise.all(procs.map(kill));
  }
}
