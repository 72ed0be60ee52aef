/**
 * `npm run bench:postgres`: the PostgreSQL inbox against the engine's own limit and against pg-boss, on a
 * throw-away PostgreSQL (bench/lib/postgres.mjs: default settings, fsync and synchronous_commit on).
 *
 * 1. `put` throughput: 64 callers each putting one new key after another, against bare `pg` loops that keep
 *    the same 64 rows in flight the simplest ways: 2 connections (as many as our puts use) each sending 32-row
 *    `INSERT … VALUES … ON CONFLICT (key) DO NOTHING RETURNING key` one after another, and 1 connection
 *    sending 64-row ones (the shape of one turn of 64 callers), into a table made the same way (same columns
 *    and indexes). Same durability (each statement its own committed
 *    transaction). Each of our runs sits between two bare runs; its ratio is to their mean; the median of the
 *    rounds is reported, with the CPU per put of this process and of the server (counts, where the clock drifts).
 * 2. Worker: 20 000 entries stored beforehand, handled by `createWorker({ concurrency: 16 })` with a handler that
 *    only counts; pg-boss 10 with the same jobs, 16 in flight two ways: 16 `work()` loops taking 1 job each, and
 *    one taking batches of 16 (pollingIntervalSeconds 0.5, its minimum), each for 10 s at most; and, for its
 *    ceiling, one taking batches of 1 000. Rounds alternate; medians.
 * 3. `put` cost with 1 000 000 remembered (done) keys in the window against an empty table (groups of 64 per
 *    turn, as 64 connections would send them), and the disk per remembered key: table and indexes over keys
 *    written straight as done rows, and over keys that went the whole way (put, claimed, completed) then VACUUM.
 * Writes bench/results/postgres.md (not with BENCH_QUICK=1: one short round of each).
 */
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { chatBody } from './lib/payloads.mjs';
import { startPostgres } from './lib/postgres.mjs';

const { postgresInbox } = await import('chat-webhooks/postgres');
const { createWorker } = await import('chat-webhooks');

const quick = process.env.BENCH_QUICK === '1';
const config = {
  seconds: Number(process.env.BENCH_SECONDS ?? (quick ? 2 : 4)),
  rounds: Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 5)),
  callers: 64,
  jobs: quick ? 5000 : 20_000,
  concurrency: 16,
  bossSeconds: quick ? 5 : 10,
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const server = await startPostgres();
const url = server.url;
const serverVersion = await (async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query('SHOW server_version');
  await client.end();
  return rows[0].server_version;
})();
let serial = 0;
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return { client: user + system, server: server.cpuUs() };
};
const perOp = (before, after, ops) => ({ clientUs: (after.client - before.client) / ops, serverUs: (after.server - before.server) / ops });

function entry(key) {
  const rawBody = chatBody(serial);
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody), rawBody, receivedAt: Date.now() };
}

/** Our puts: `callers` loops, each putting a new key as soon as its last was answered. */
async function oursPuts(inbox, seconds) {
  let count = 0;
  const until = performance.now() + seconds * 1000;
  const before = cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: config.callers }, async () => {
      while (performance.now() < until) {
        if ((await inbox.put(entry(`ours-${++serial}`))) !== 'stored') throw new Error('not stored');
        count += 1;
      }
    }),
  );
  return { rate: count / ((performance.now() - started) / 1000), ...perOp(before, cpu(), count) };
}

/** The bare loop: 2 connections, each a 32-row INSERT … ON CONFLICT DO NOTHING RETURNING key after another. */
async function barePuts(clients, table, seconds) {
  const rows = config.callers / clients.length;
  const placeholders = Array.from({ length: rows }, (_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, 0, $${i * 5 + 3}, $${i * 5 + 3}, 0, $${i * 5 + 4}, $${i * 5 + 5})`).join(', ');
  const text = `INSERT INTO ${table} (key, trigger, state, due, received_at, attempts, raw_body, traceparent) VALUES ${placeholders} ON CONFLICT (key) DO NOTHING RETURNING key`;
  let count = 0;
  const until = performance.now() + seconds * 1000;
  const before = cpu();
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < until) {
        const values = [];
        for (let i = 0; i < rows; i++) {
          const { key, trigger, receivedAt, rawBody } = entry(`bare-${++serial}`);
          values.push(key, trigger, receivedAt, rawBody, null);
        }
        const result = await client.query({ name: `bare-${rows}`, text, values });
        if (result.rowCount !== rows) throw new Error('not stored');
        count += rows;
      }
    }),
  );
  return { rate: count / ((performance.now() - started) / 1000), ...perOp(before, cpu(), count) };
}

async function putThroughput() {
  const inbox = postgresInbox({ connectionString: url, schema: 'put_ours' });
  await inbox.stats();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await postgresInbox({ connectionString: url, schema: 'put_bare' }).close();
  const bareInbox = postgresInbox({ connectionString: url, schema: 'put_bare' });
  await bareInbox.stats(); // the same table, made by the same migration
  await bareInbox.close();
  const clients = await Promise.all([0, 1].map(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }));
  const one = clients.slice(0, 1);
  await oursPuts(inbox, 1);
  await barePuts(clients, 'put_bare.inbox', 1);
  await barePuts(one, 'put_bare.inbox', 1);
  const mean = (a, b) => ({ rate: (a.rate + b.rate) / 2, clientUs: (a.clientUs + b.clientUs) / 2, serverUs: (a.serverUs + b.serverUs) / 2 });
  const line = (name, r) => `${name} ${Math.round(r.rate)}/s (${r.clientUs.toFixed(1)} µs client, ${r.serverUs.toFixed(1)} µs server per put)`;
  const rounds = [];
  for (let round = 0; round < config.rounds; round++) {
    const single1 = await barePuts(one, 'put_bare.inbox', config.seconds);
    const split1 = await barePuts(clients, 'put_bare.inbox', config.seconds);
    const ours = await oursPuts(inbox, config.seconds);
    const split2 = await barePuts(clients, 'put_bare.inbox', config.seconds);
    const single2 = await barePuts(one, 'put_bare.inbox', config.seconds);
    const [bare, single] = [mean(split1, split2), mean(single1, single2)];
    rounds.push({ ours, bare, single, ratio: ours.rate / bare.rate, singleRatio: ours.rate / single.rate });
    console.log(`put round ${round + 1}: ${line('ours', ours)}, ${line('bare 2×32', bare)}: ${(ours.rate / bare.rate).toFixed(2)}×, ${line('bare 1×64', single)}: ${(ours.rate / single.rate).toFixed(2)}×`);
  }
  await inbox.close();
  await Promise.all(clients.map((client) => client.end()));
  await admin.end();
  return rounds;
}

/**
 * Our worker over `jobs` entries stored beforehand: handled per second. `transaction`: each event's handler in
 * its own transaction (`transaction: true`, the handler writing nothing), what exactly-once costs by itself.
 */
async function oursWorker(round, transaction = false) {
  const schema = `worker_${round}${transaction ? '_tx' : ''}`;
  const inbox = postgresInbox({ connectionString: url, schema });
  for (let start = 0; start < config.jobs; start += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, i) => inbox.put(entry(`w${round}-${start + i}`))));
  }
  let handled = 0;
  let finished;
  const allDone = new Promise((resolve) => (finished = resolve));
  const worker = createWorker({ inbox, concurrency: config.concurrency, transaction, logger: {} }).on('message_sent', () => {
    if (++handled === config.jobs) finished();
  });
  const started = performance.now();
  worker.start();
  await allDone;
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await inbox.close();
  return config.jobs / seconds;
}

/**
 * pg-boss over the same number of jobs: `loops` work() loops of `batchSize` each, until all are handled or
 * `config.bossSeconds` passed (at 16 in flight it handles about 32 a second: 20 000 would take ten minutes).
 */
async function bossWorker(boss, round, loops, batchSize) {
  const queue = `q${round}-${loops}x${batchSize}`;
  await boss.createQueue(queue);
  for (let start = 0; start < config.jobs; start += 1000) {
    await boss.insert(Array.from({ length: Math.min(1000, config.jobs - start) }, (_, i) => ({ name: queue, data: JSON.parse(chatBody(start + i)) })));
  }
  let handled = 0;
  let finished;
  const allDone = new Promise((resolve) => (finished = resolve));
  const started = performance.now();
  for (let i = 0; i < loops; i++) {
    await boss.work(queue, { batchSize, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      handled += jobs.length;
      if (handled >= config.jobs) finished();
    });
  }
  const timer = setTimeout(finished, config.bossSeconds * 1000);
  await allDone;
  clearTimeout(timer);
  const rate = handled / ((performance.now() - started) / 1000);
  await boss.offWork(queue);
  return rate;
}

async function workers() {
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 20 });
  boss.on('error', () => undefined);
  await boss.start();
  const rounds = [];
  for (let round = 0; round < config.rounds; round++) {
    const ours = await oursWorker(round);
    const transaction = await oursWorker(round, true);
    const loops = await bossWorker(boss, round, config.concurrency, 1);
    const batch = await bossWorker(boss, round, 1, config.concurrency);
    const wide = await bossWorker(boss, round, 1, 1000);
    rounds.push({ ours, transaction, loops, batch, wide });
    console.log(`worker round ${round + 1}: ours ${Math.round(ours)}/s, ours with transaction ${Math.round(transaction)}/s, pg-boss 16×1 ${Math.round(loops)}/s, pg-boss 1×16 ${Math.round(batch)}/s, pg-boss 1×1000 ${Math.round(wide)}/s`);
  }
  await boss.stop({ graceful: false, wait: true });
  return rounds;
}

/** Microseconds per put over `count` new keys, in groups of 64 per turn. */
async function putCost(inbox, count, prefix) {
  const started = process.hrtime.bigint();
  for (let done = 0; done < count; done += 64) {
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => inbox.put(entry(`${prefix}-${done + i}`))));
    if (results.some((result) => result !== 'stored')) throw new Error('a new key was not stored');
  }
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

async function remembered() {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const size = async (schema) => Number((await admin.query(`SELECT pg_total_relation_size('${schema}.inbox') AS n`)).rows[0].n);
  // Two tables: one kept empty (emptied after each measure), one with 1 000 000 done keys; measures alternate,
  // so that both see the same moments of a machine whose speed drifts.
  const empty = postgresInbox({ connectionString: url, schema: 'cost_empty' });
  const full = postgresInbox({ connectionString: url, schema: 'cost' });
  await Promise.all([empty.stats(), full.stats()]);
  const sizeBefore = await size('cost');
  const window = Date.now() + 86_400_000;
  await admin.query(`INSERT INTO cost.inbox (key, trigger, state, due, received_at, attempts)
    SELECT 'wh_chat_events:message_sent:' || (1421000000 + n), 'message_sent', 2, ${window}, ${Date.now()}, 1 FROM generate_series(1, 1000000) AS n`);
  await admin.query('VACUUM ANALYZE cost.inbox');
  const compactBytes = (await size('cost')) - sizeBefore;
  const emptied = async () => {
    await admin.query('DELETE FROM cost_empty.inbox');
    await admin.query('VACUUM cost_empty.inbox');
  };
  await putCost(empty, 5000, 'warm');
  await emptied();
  await putCost(full, 5000, 'warm');
  const emptyRuns = [];
  const fullRuns = [];
  for (let round = 0; round < 5; round++) {
    emptyRuns.push(await putCost(empty, 20_000, `e${round}`));
    await emptied();
    fullRuns.push(await putCost(full, 20_000, `m${round}`));
  }
  const [emptyUs, million] = [median(emptyRuns), median(fullRuns)];
  await Promise.all([empty.close(), full.close()]);

  // The whole way: keys put (with their ~1 KB bodies), claimed and completed as the worker's statements do, in
  // chunks of 10 000 with a VACUUM after each (autovacuum's part). The first 100 000 fill the table; the next
  // 100 000 show what each further remembered key adds once freed space is reused: the steady state.
  const life = postgresInbox({ connectionString: url, schema: 'life' });
  await life.stats();
  const lifeBefore = await size('life');
  let key = 1421000000;
  const lifeChunk = async () => {
    for (let start = 0; start < 10_000; start += 1000) {
      await Promise.all(Array.from({ length: 1000 }, () => life.put(entry(`wh_chat_events:message_sent:${key++}`))));
    }
    await admin.query(`UPDATE life.inbox SET state = 1, attempts = 1, token = 'x' WHERE state = 0`);
    await admin.query(`UPDATE life.inbox SET state = 2, due = received_at + 86400000, token = NULL, raw_body = NULL, traceparent = NULL WHERE state = 1`);
    await admin.query('VACUUM life.inbox');
  };
  for (let chunk = 0; chunk < 10; chunk++) await lifeChunk();
  const lifeFirst = await size('life');
  for (let chunk = 0; chunk < 10; chunk++) await lifeChunk();
  const lifeBytes = lifeFirst - lifeBefore;
  const steadyBytes = (await size('life')) - lifeFirst;
  await life.close();
  await admin.end();
  return { empty: emptyUs, million, ratio: million / emptyUs, compactPerKey: compactBytes / 1e6, lifePerKey: lifeBytes / 1e5, steadyPerKey: steadyBytes / 1e5 };
}

/** BENCH_PARTS=put,worker,cost runs only those (while working on one; the report needs all three). */
const parts = process.env.BENCH_PARTS?.split(',') ?? ['put', 'worker', 'cost'];
try {
  const puts = parts.includes('put') ? await putThroughput() : undefined;
  const work = parts.includes('worker') ? await workers() : undefined;
  const cost = parts.includes('cost') ? await remembered() : undefined;
  if (cost) console.log('put cost and disk:', JSON.stringify(cost));
  if (puts && work && cost) {
    const report = render(puts, work, cost);
    console.log(`\n${report}`);
    if (!quick) writeFileSync(new URL('results/postgres.md', import.meta.url), report);
  }
} finally {
  server.stop();
}

function render(puts, work, cost) {
  const putRatio = median(puts.map((r) => r.ratio));
  const m = (list, pick) => median(list.map(pick));
  const bossBest = work.map((r) => Math.max(r.loops, r.batch));
  const workRatio = median(work.map((r, i) => r.ours / bossBest[i]));
  return [
    '# The PostgreSQL inbox against the engine and pg-boss (`npm run bench:postgres`)',
    '',
    `node ${process.version}, PostgreSQL ${serverVersion} (default settings: fsync on, synchronous_commit on), on this machine's 2 shared cores, ${config.rounds} rounds.`,
    '',
    `## put throughput: ${config.callers} callers, each one put after another (${config.seconds} s runs)`,
    '',
    '| | puts/s (median) | client CPU µs/put | server CPU µs/put |',
    '|---|---|---|---|',
    `| postgresInbox put | ${Math.round(m(puts, (r) => r.ours.rate))} | ${m(puts, (r) => r.ours.clientUs).toFixed(1)} | ${m(puts, (r) => r.ours.serverUs).toFixed(1)} |`,
    `| bare pg: 2 connections × 32-row INSERT … ON CONFLICT DO NOTHING | ${Math.round(m(puts, (r) => r.bare.rate))} | ${m(puts, (r) => r.bare.clientUs).toFixed(1)} | ${m(puts, (r) => r.bare.serverUs).toFixed(1)} |`,
    `| bare pg: 1 connection × 64-row INSERT … ON CONFLICT DO NOTHING | ${Math.round(m(puts, (r) => r.single.rate))} | ${m(puts, (r) => r.single.clientUs).toFixed(1)} | ${m(puts, (r) => r.single.serverUs).toFixed(1)} |`,
    '',
    `Ours / bare 2 × 32, per round (each of ours between two runs of each bare loop): ${puts.map((r) => r.ratio.toFixed(2)).join(', ')}; median **${putRatio.toFixed(2)}×** (target ≥ 0.8×).`,
    `Ours / bare 1 × 64: ${puts.map((r) => r.singleRatio.toFixed(2)).join(', ')}; median **${median(puts.map((r) => r.singleRatio)).toFixed(2)}×**.`,
    'Our puts of one turn are one statement (as the inbox promises): 64 callers answered together put again together, so one 64-row',
    'statement is in flight while the second connection waits; the 2 × 32 loop keeps the server busy with one statement while it',
    'builds the next. The CPU per put (this process, and the server) is the cost without that overlap.',
    '',
    `## Worker: ${config.jobs} entries stored beforehand, ${config.concurrency} in flight, a handler that only counts`,
    '',
    '| | handled/s (median) | per round |',
    '|---|---|---|',
    `| createWorker({ inbox: postgresInbox, concurrency: 16 }) | ${Math.round(m(work, (r) => r.ours))} | ${work.map((r) => Math.round(r.ours)).join(', ')} |`,
    `| the same with \`transaction: true\` (each handler in a transaction, the completion committed in it) | ${Math.round(m(work, (r) => r.transaction))} | ${work.map((r) => Math.round(r.transaction)).join(', ')} |`,
    `| pg-boss 10: 16 work() loops, batchSize 1 | ${Math.round(m(work, (r) => r.loops))} | ${work.map((r) => Math.round(r.loops)).join(', ')} |`,
    `| pg-boss 10: 1 work() loop, batchSize 16 | ${Math.round(m(work, (r) => r.batch))} | ${work.map((r) => Math.round(r.batch)).join(', ')} |`,
    `| pg-boss 10: 1 work() loop, batchSize 1 000 (1 000 in flight: not the same concurrency, its best case here) | ${Math.round(m(work, (r) => r.wide))} | ${work.map((r) => Math.round(r.wide)).join(', ')} |`,
    '',
    `With \`transaction: true\`: median **${m(work, (r) => r.transaction / r.ours).toFixed(2)}×** the handled/s without (same round). Each event then costs its own`,
    'transaction on a connection of its own (BEGIN with the limits, the row lock, a savepoint, the completion, COMMIT: five round trips',
    'where the worker otherwise batches completions), and its commit waits for the WAL flush (it holds the handlers\' writes), where the',
    'worker\'s own writes use `synchronous_commit = off`.',
    '',
    `Ours / the faster pg-boss setup of the same round at 16 in flight: median **${workRatio.toFixed(2)}×** (target ≥ 1×). pg-boss fetches once per`,
    'polling interval per work() loop (0.5 s at least) and waits out the rest of the interval after each batch, so at 16 in flight it',
    'handles at most 16 jobs per half second; ours claims again as soon as a handler finishes, and an idle one wakes on NOTIFY.',
    '',
    '## put cost with 1 000 000 remembered keys, and the disk they take',
    '',
    `put (groups of 64 per turn, medians of 5 × 20 000, alternating between the two tables): ${cost.empty.toFixed(1)} µs with an empty table, ${cost.million.toFixed(1)} µs with 1 000 000 done keys in the window: **${cost.ratio.toFixed(2)}×** (target ≤ 2×).`,
    `Disk per remembered key (table, TOAST and both indexes; keys like \`wh_chat_events:message_sent:1421000000\`): ${Math.round(cost.compactPerKey)} bytes written straight as done rows (the floor); keys that went the whole way (stored with a ~1 KB body, claimed, completed; VACUUM every 10 000, autovacuum's part): ${Math.round(cost.lifePerKey)} bytes each over the first 100 000 (the table grows to hold bodies and old row versions), **${Math.round(cost.steadyPerKey)} bytes** each over the next 100 000, once that space is reused: what each further remembered key costs.`,
    '',
  ].join('\n');
}
