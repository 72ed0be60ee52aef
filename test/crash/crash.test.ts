/**
 * Kill-in-the-middle runs (issue 11, deliverable 7), each in real processes from the built package:
 * - SQLite: one receiver (consuming in process) takes 5 000 distinct events plus 500 repeats from 50
 *   concurrent senders over loopback, is killed with SIGKILL at about 40 % acknowledged, and restarts;
 * - Redis: two receivers (`consume: false`) behind the senders and two workers; one receiver and one
 *   worker are killed with SIGKILL midway and stay dead;
 * - PostgreSQL: the same, and the server itself restarted (fast shutdown: connections cut, uncommitted work
 *   rolled back) a little later, while both survivors go on.
 * The senders re-send only what was not answered 200. Every acknowledged event must be handled; each
 * event's handler completes once, except those running at a kill (at most `concurrency` re-runs each).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { freePort, startRedis, type RedisServer } from '../support/redis-server.js';
import { deliveries, kill, sendAll, start, tally, untilHandled, type Proc } from './harness.js';

const root = new URL('../../', import.meta.url);
const CONCURRENCY = 8;
const DISTINCT = 5000;
// Short, so a killed process's events run again soon; long enough that a live process starved of CPU on a
// busy CI machine (event-loop lag of a second or more) does not lose leases it is renewing.
const LEASE_MS = 3000;
let dir: string;
const running: Proc[] = [];

beforeAll(() => {
  // CI builds before testing; a local run on a fresh clone builds here.
  if (!existsSync(new URL('dist/src/stores/postgres/index.js', root))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  dir = mkdtempSync(join(tmpdir(), 'inbox-crash-'));
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((proc) => kill(proc)));
  rmSync(dir, { recursive: true, force: true });
});

async function launch(env: Record<string, string>): Promise<Proc> {
  const proc = await start(env);
  running.push(proc);
  return proc;
}

/**
 * Two receivers and two workers on one store, sharing the deliveries; once 40 % are acknowledged, receiver 0
 * and worker 0 are killed with SIGKILL and the platform's retries go to receiver 1. `onProgress` sees each
 * acknowledgement count (to do more mid-run). Resolves once every delivery was acknowledged and the kills done.
 */
async function twoOfEach(store: Record<string, string>, onProgress?: (acked: number) => void) {
  const common = { ...store, CONCURRENCY: String(CONCURRENCY), LEASE_MS: String(LEASE_MS) };
  const ports = [await freePort(), await freePort()];
  const receivers = await Promise.all(ports.map((port) => launch({ ...common, ROLE: 'receiver', PORT: String(port), CONSUME: '0' })));
  const workers = await Promise.all([launch({ ...common, ROLE: 'worker' }), launch({ ...common, ROLE: 'worker' })]);
  let alive = [0, 1];
  let spread = 0;
  let killing: Promise<unknown> | undefined;
  const stats = await sendAll(
    deliveries(DISTINCT),
    (attempt) => `http://127.0.0.1:${ports[alive[(spread++ + attempt) % alive.length]!]}/`,
    (progress) => {
      if (!killing && progress.acked.size >= DISTINCT * 0.4) {
        alive = [1];
        killing = Promise.all([kill(receivers[0]!), kill(workers[0]!)]);
      }
      onProgress?.(progress.acked.size);
    },
  );
  await killing;
  return { stats, stop: () => Promise.all([kill(receivers[1]!, 'SIGTERM'), kill(workers[1]!, 'SIGTERM')]) };
}

describe('crash: nothing acknowledged is lost', () => {
  it('SQLite: a receiver killed with SIGKILL at ~40 % acknowledged, restarted', async () => {
    const port = await freePort();
    const env = {
      ROLE: 'receiver',
      STORE: 'sqlite',
      DB: join(dir, 'crash.sqlite'),
      PORT: String(port),
      CONSUME: '1',
      CONCURRENCY: String(CONCURRENCY),
      LEASE_MS: String(LEASE_MS),
      HANDLED: join(dir, 'sqlite-handled.txt'),
    };
    let receiver = await launch(env);
    let restarted: Promise<void> | undefined;
    const stats = await sendAll(deliveries(DISTINCT), () => `http://127.0.0.1:${port}/`, (progress) => {
      if (!restarted && progress.acked.size >= DISTINCT * 0.4) {
        restarted = kill(receiver).then(async () => {
          receiver = await launch(env);
        });
      }
    });
    await restarted;
    const result = tally(stats, await untilHandled(env.HANDLED, DISTINCT, 30_000), env.HANDLED);
    console.log('sqlite crash run:', JSON.stringify(result));
    expect(result).toMatchObject({ acknowledged: DISTINCT, handled: DISTINCT, lost: 0 });
    expect(result.reRun).toBeLessThanOrEqual(CONCURRENCY);
    expect(result.resent).toBeGreaterThan(0); // the kill did cut some deliveries off
    await kill(receiver, 'SIGTERM');
  }, 90_000);

  describe('Redis', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.stop());

    it('two receivers and two workers; one of each killed with SIGKILL midway', async () => {
      const handled = join(dir, 'redis-handled.txt');
      const run = await twoOfEach({ STORE: 'redis', REDIS_URL: redis.url, HANDLED: handled });
      const result = tally(run.stats, await untilHandled(handled, DISTINCT, 30_000), handled);
      console.log('redis crash run:', JSON.stringify(result));
      expect(result).toMatchObject({ acknowledged: DISTINCT, handled: DISTINCT, lost: 0 });
      expect(result.reRun).toBeLessThanOrEqual(CONCURRENCY);
      await run.stop();
    }, 90_000);
  });

  describe('PostgreSQL', () => {
    let postgres: PostgresServer;
    beforeAll(async () => {
      postgres = await startPostgres(); // its own cluster: this test restarts it
    }, 60_000);
    afterAll(() => postgres?.stop());

    it('two receivers and two workers; one of each killed with SIGKILL midway, then the server restarted', async () => {
      const handled = join(dir, 'postgres-handled.txt');
      let restarting: Promise<void> | undefined;
      let ackedAtRestart = 0;
      const started = Date.now();
      const run = await twoOfEach({ STORE: 'postgres', POSTGRES_URL: postgres.url, HANDLED: handled }, (acked) => {
        if (!restarting && acked >= DISTINCT * 0.6) {
          ackedAtRestart = acked;
          restarting = postgres.restart();
        }
      });
      await restarting;
      const ackedInMs = Date.now() - started;
      const result = tally(run.stats, await untilHandled(handled, DISTINCT, 60_000), handled);
      console.log('postgres crash run:', JSON.stringify({ ...result, ackedAtRestart, ackedInMs, handledInMs: Date.now() - started }));
      expect(ackedAtRestart).toBeLessThan(DISTINCT); // the restart came mid-run
      expect(result).toMatchObject({ acknowledged: DISTINCT, handled: DISTINCT, lost: 0 });
      // The killed worker's events in flight, and the live worker's whose completion the restart cut off.
      expect(result.reRun).toBeLessThanOrEqual(2 * CONCURRENCY);
      expect(result.resent).toBeGreaterThan(0);
      await run.stop();
    }, 120_000);
  });
});
