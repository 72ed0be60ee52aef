/**
 * Exactly-once effects (issue 36), the "Checked by" run: 3 000 events through two receivers into PostgreSQL,
 * two workers whose handlers insert an effect row (a table with no unique constraint) and throw after the
 * insert on ~3 % of first attempts, one worker SIGKILLed at a quarter of the effects, PostgreSQL crashed
 * (`pg_ctl -m immediate`) and started at half, the other worker SIGKILLed at three quarters (each killed
 * worker is started again). Once with `transaction: true`, once with the handler writing through a pool of its
 * own (today's at-least-once), and the time from a SIGKILL to the re-run of the killed worker's event, both
 * ways. Writes bench/results/exactly-once.md.
 *
 *   npm run build && node bench/exactly-once.mjs [events]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from './lib/postgres.mjs';
import { effectsRun, rerunAfterKill } from '../test/crash/effects-run.mjs';

const events = Number(process.argv[2] ?? 3000);
const dir = mkdtempSync(join(tmpdir(), 'bench-exactly-once-'));
const server = await startPostgres();
const LEASE_MS = 30_000;
try {
  const load = loadavg()[0].toFixed(1);
  const rerun = {};
  for (const mode of ['transaction', 'own']) {
    rerun[mode] = await rerunAfterKill({ server, mode, leaseMs: LEASE_MS, dir });
    console.log(`SIGKILL -> re-run (${mode}): ${rerun[mode]} ms`);
  }
  const runs = [];
  for (const mode of ['transaction', 'own']) {
    const figures = await effectsRun({ server, events, mode, concurrency: 8, perSecond: 100, timeoutMs: 600_000 });
    console.log(JSON.stringify(figures));
    runs.push(figures);
  }
  const row = (name, get) => `| ${name} | ${runs.map(get).join(' | ')} |`;
  const report = `# Exactly-once effects: the crash run

\`node bench/exactly-once.mjs ${events}\` (after \`npm run build\`), ${new Date().toISOString().slice(0, 10)}: ${events} events through two
receivers into PostgreSQL (its own throw-away cluster, fsync on), two workers (concurrency 8) whose handlers insert one row
per run into \`effects\` (no unique constraint) and throw after the insert on ~3 % of first attempts; one worker
SIGKILLed at a quarter of the effects, PostgreSQL crashed with \`pg_ctl -m immediate\` and started again at half, the other
worker SIGKILLed at three quarters (each killed worker started again). The step columns say how many events had their
effect when the step was taken (the runner polls, so a step lands a little after its fraction). Shared machine:
${availableParallelism()} cores, load average ${load} when the run began (other engineers' work), so times are slow and noisy;
the counts are what the run checks.

| | \`transaction: true\` | handler's own pool |
|---|---|---|
${row('acknowledged (answered 200)', (r) => r.acknowledged)}
${row('events with exactly one effect row', (r) => r.exactlyOne)}
${row('acknowledged events without a row', (r) => r.missing)}
${row('events with more than one row', (r) => r.doubledEvents)}
${row('extra rows (doubles)', (r) => r.extraRows)}
${row('effect rows in all', (r) => r.effectRows)}
${row('entries that ran more than once (throws, kills, crash)', (r) => r.ranAgain)}
${row('dead entries', (r) => r.dead)}
${row('deliveries re-sent (503 or refused: the crash)', (r) => r.resent)}
${row('first worker killed at (events with an effect)', (r) => r.killedFirstWorkerAt)}
${row('PostgreSQL crashed at', (r) => r.crashedPostgresAt)}
${row('second worker killed at', (r) => r.killedSecondWorkerAt)}
${row('run took (ms)', (r) => r.elapsedMs)}

## SIGKILL → re-run

One event whose first run hangs, two workers (lease ${LEASE_MS} ms); the worker running it is SIGKILLed 3 s after the
run began; the time until the other worker starts it again:

| | \`transaction: true\` | without |
|---|---|---|
| SIGKILL → re-run (ms) | ${rerun.transaction} | ${rerun.own} |

With \`transaction\` the entry is held by the transaction's row lock, which the server drops with the killed
process's connection; the other worker finds it at its next look (a notification, or \`pollMs\`, default 2 s, at the
latest). Without, it waits for the lease to run out.
`;
  writeFileSync(new URL('results/exactly-once.md', import.meta.url), report);
  console.log(report);
} finally {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
}
