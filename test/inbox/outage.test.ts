/**
 * An outage keeps nothing for requests already answered: while the store is down (Redis killed, or paused so
 * that it answers nothing; the SQLite file locked by another process; the memory inbox closed), every
 * delivery is answered 503 (the platform sends it again) and none of their ~100 KB bodies stays in memory
 * once answered. ioredis used to keep each put in its offline queue for the outage's length: 1 000
 * deliveries of 100 KB kept ~300 MB. After the store is back, deliveries are stored again.
 *
 * Each case runs a receiver from the built package in its own process with --expose-gc
 * (test/inbox/outage-child.mjs) and reads the heap it retains after a GC, against before the outage.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const RETAINED_LIMIT_MB = 20;

beforeAll(() => {
  if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
}, 120_000);

interface OutageReport {
  statuses: Record<string, number>;
  answeredMs: number;
  retainedMb: number;
}

/**
 * Runs the child until it has reported the outage and, unless `restore` is absent, the recovery. `breakStore`
 * runs once the child stored a first delivery; `restore` once it reported the outage.
 */
async function outage(env: Record<string, string>, breakStore: () => Promise<void>, restore?: () => Promise<void>) {
  const child = spawn(process.execPath, ['--expose-gc', 'test/inbox/outage-child.mjs'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let report: OutageReport | undefined;
  let back: { status: number } | undefined;
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === 'ready') {
        await breakStore();
        child.stdin.write('outage\n');
      } else if (line.startsWith('{"outage"')) {
        report = (JSON.parse(line) as { outage: OutageReport }).outage;
        if (!restore) break;
        await restore();
        child.stdin.write('back\n');
      } else if (line.startsWith('{"back"')) {
        back = (JSON.parse(line) as { back: { status: number } }).back;
        break;
      }
    }
  } finally {
    child.kill('SIGKILL');
  }
  return { report, back };
}

describe('an outage of the store keeps nothing for the requests answered 503', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it(`Redis killed: 1 000 deliveries of 100 KB answered 503 retain < ${RETAINED_LIMIT_MB} MB; stored again once Redis is back`, async () => {
    const { port, dir } = redis;
    const { report, back } = await outage(
      { INBOX: 'redis', REDIS_URL: redis.url, DELIVERIES: '1000' },
      async () => {
        redis.process.kill('SIGKILL');
        await new Promise((resolve) => redis.process.once('exit', resolve));
      },
      async () => {
        redis = await startRedis([], { port, dir });
      },
    );
    console.log('Redis killed:', JSON.stringify(report));
    expect(report?.statuses).toEqual({ 503: 1000 });
    expect(report?.retainedMb).toBeLessThan(RETAINED_LIMIT_MB);
    expect(back).toEqual({ status: 200 });
  }, 90_000);

  it(`Redis paused (connected, answering nothing): 300 deliveries of 100 KB retain < ${RETAINED_LIMIT_MB} MB (two batches in flight at most)`, async () => {
    const admin = new Redis(redis.url);
    // Long enough for every delivery's commit timeout (2 s) to pass. CLIENT UNPAUSE would wait for the pause
    // too (Redis 7.0), so the pause runs out instead.
    const PAUSE_MS = 8000;
    let pausedUntil = 0;
    try {
      const { report, back } = await outage(
        { INBOX: 'redis', REDIS_URL: redis.url, DELIVERIES: '300' },
        async () => {
          await admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
          pausedUntil = Date.now() + PAUSE_MS;
        },
        async () => void (await new Promise((resolve) => setTimeout(resolve, Math.max(0, pausedUntil - Date.now())))),
      );
      console.log('Redis paused:', JSON.stringify(report));
      expect(report?.statuses).toEqual({ 503: 300 });
      expect(report?.retainedMb).toBeLessThan(RETAINED_LIMIT_MB);
      expect(back).toEqual({ status: 200 });
    } finally {
      admin.disconnect();
    }
  }, 90_000);

  it(`SQLite locked by another process: 300 deliveries of 100 KB answered 503 retain < ${RETAINED_LIMIT_MB} MB; stored again once unlocked`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outage-sqlite-'));
    const path = join(dir, 'inbox.sqlite');
    let locker: Database.Database | undefined;
    try {
      const { report, back } = await outage(
        { INBOX: 'sqlite', DB: path, DELIVERIES: '300' },
        async () => {
          locker = new Database(path);
          locker.exec('BEGIN EXCLUSIVE');
        },
        async () => {
          locker?.exec('COMMIT');
          locker?.close();
        },
      );
      console.log('SQLite locked:', JSON.stringify(report));
      expect(report?.statuses).toEqual({ 503: 300 });
      expect(report?.retainedMb).toBeLessThan(RETAINED_LIMIT_MB);
      expect(back).toEqual({ status: 200 });
    } finally {
      if (locker?.open) locker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it(`memory inbox closed: 300 deliveries of 100 KB answered 503 retain < ${RETAINED_LIMIT_MB} MB`, async () => {
    const { report } = await outage({ INBOX: 'memory', DELIVERIES: '300' }, async () => undefined);
    console.log('memory closed:', JSON.stringify(report));
    expect(report?.statuses).toEqual({ 503: 300 });
    expect(report?.retainedMb).toBeLessThan(RETAINED_LIMIT_MB);
  }, 60_000);
});
