/**
 * Exactly-once effects under crashes (issue 36), counted on the effects themselves: receivers and workers as
 * processes (effects-run.mjs, effects-process.mjs), handlers inserting into a table with no unique constraint
 * and throwing after the insert on ~3 % of first attempts, a worker SIGKILLed at a quarter and the other at
 * three quarters, PostgreSQL crashed with `pg_ctl -m immediate` at half. With `transaction: true` every
 * acknowledged event has exactly one row. The full run (3 000 events, and the same with the handler's own
 * pool) is bench/exactly-once.mjs, its figures in bench/results/exactly-once.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { effectsRun, rerunAfterKill } from './effects-run.mjs';

const root = new URL('../../', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'exactly-once-'));
let postgres: PostgresServer;

beforeAll(async () => {
  if (!existsSync(new URL('dist/src/stores/postgres/transactions.js', root))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  postgres = await startPostgres(); // its own cluster: the run crashes it
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('exactly-once effects with transaction: true', () => {
  it('300 events, workers SIGKILLed at 1/4 and 3/4, PostgreSQL crashed at 1/2: one effect row per acknowledged event', async () => {
    const figures = await effectsRun({ server: postgres, events: 300, mode: 'transaction', concurrency: 4, perSecond: 40, timeoutMs: 45_000 });
    console.log('exactly-once crash run:', JSON.stringify(figures));
    expect(figures.unexpectedExits).toEqual([]); // Nothing died of the crash but what the run killed.
    expect(figures).toMatchObject({ acknowledged: 300, missing: 0, doubledEvents: 0, exactlyOne: 300, effectRows: 300, dead: 0 });
    // Every step of the run happened before the end.
    expect(figures.killedFirstWorkerAt).toBeDefined();
    expect(figures.crashedPostgresAt).toBeDefined();
    expect(figures.killedSecondWorkerAt).toBeDefined();
    // The ~3 % that threw after their insert, and the runs the kills cut off, ran again: their rows rolled back.
    expect(figures.ranAgain).toBeGreaterThan(5);
  }, 60_000);

  it('a SIGKILLed worker\'s event runs again in about a second, not after its 30 s lease', async () => {
    const ms = await rerunAfterKill({ server: postgres, mode: 'transaction', leaseMs: 30_000, dir });
    console.log(`SIGKILL -> re-run with transaction: ${ms} ms (lease 30 000 ms)`);
    expect(ms).toBeLessThan(5000);
  }, 60_000);
});
