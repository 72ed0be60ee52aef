/**
 * `health()` of receivers and workers, from what they know of their inbox: `failing` within a second of the
 * inbox no longer taking writes (Redis stopped, a SQLite file locked by another process), `ok` again once
 * it does; `closing` after close().
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, createWorker, memoryInbox, type Health } from '../../src/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { startRedis } from '../support/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'health-'));
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Asks `health()` every 100 ms, as a probe would, until it says `inbox`; resolves how long that took. */
async function until(health: () => Promise<Health>, inbox: Health['inbox'], timeoutMs = 3000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if ((await health()).inbox === inbox) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`health() did not say ${inbox} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('health()', () => {
  it('says none without an inbox, and closing once close() was called', async () => {
    const webhooks = createWebhooks({ auth: false, logLevel: 'silent' });
    expect(await webhooks.health()).toEqual({ ok: true, inbox: 'none', closing: false });
    await webhooks.close();
    expect(await webhooks.health()).toEqual({ ok: false, inbox: 'none', closing: true });
  });

  it('says failing after a failed commit, with its error, and ok after the next good one', async () => {
    const inbox = memoryInbox();
    let broken = false;
    const put = inbox.put.bind(inbox);
    // The memory inbox cannot break by itself: this one refuses puts while `broken`.
    inbox.put = (entry) => (broken ? Promise.reject(new Error('disk full')) : put(entry));
    const webhooks = createWebhooks({ auth: false, inbox, consume: false, logLevel: 'silent' });
    cleanups.push(() => webhooks.close());
    expect(await webhooks.health()).toEqual({ ok: true, inbox: 'ok', closing: false });
    broken = true;
    expect((await webhooks.handle(buildRequest(createTestEvent('message_sent')))).status).toBe(503);
    expect(await webhooks.health()).toEqual({ ok: false, inbox: 'failing', closing: false, lastError: 'disk full' });
    broken = false;
    expect((await webhooks.handle(buildRequest(createTestEvent('message_sent')))).status).toBe(200);
    expect(await webhooks.health()).toEqual({ ok: true, inbox: 'ok', closing: false });
  });

  it('turns failing within a second of Redis stopping, and ok after it resumes (receiver and worker)', async () => {
    const server = await startRedis();
    const inbox = redisInbox({ url: server.url, prefix: 'health' });
    const webhooks = createWebhooks({ auth: false, inbox, consume: false, logLevel: 'silent' });
    const worker = createWorker({ inbox: redisInbox({ url: server.url, prefix: 'health' }), logger: {} }).start();
    cleanups.push(
      () => server.stop(),
      () => inbox.close(),
      () => webhooks.close(),
      () => worker.close(),
      () => server.process.kill('SIGCONT'),
    );
    expect((await webhooks.handle(buildRequest(createTestEvent('message_sent')))).status).toBe(200);
    expect(await webhooks.health()).toMatchObject({ ok: true, inbox: 'ok' });

    // Stopped, not killed: the connection stays open and every command waits, the worst case for a probe.
    server.process.kill('SIGSTOP');
    expect(await until(() => webhooks.health(), 'failing')).toBeLessThan(1000);
    expect(await until(() => worker.health(), 'failing')).toBeLessThan(1000);
    expect((await webhooks.health()).lastError).toMatch(/did not answer/);

    server.process.kill('SIGCONT');
    expect(await until(() => webhooks.health(), 'ok')).toBeLessThan(1000);
    expect(await until(() => worker.health(), 'ok')).toBeLessThan(1000);
    expect(await webhooks.health()).toEqual({ ok: true, inbox: 'ok', closing: false });
  });

  it('turns failing while another process holds the SQLite file’s write lock, and ok after', async () => {
    const path = join(dir, 'locked.sqlite');
    const inbox = sqliteInbox({ path });
    const webhooks = createWebhooks({ auth: false, inbox, consume: false, logLevel: 'silent' });
    cleanups.push(() => inbox.close(), () => webhooks.close());
    expect(await webhooks.health()).toMatchObject({ inbox: 'ok' });

    const other = new Database(path, { timeout: 0 });
    cleanups.push(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    // The driver waits for the lock up to its busy timeout (1 s), holding the event loop meanwhile.
    expect(await until(() => webhooks.health(), 'failing')).toBeLessThan(1600);
    expect((await webhooks.health()).lastError).toMatch(/locked|busy/i);
    other.exec('ROLLBACK');
    expect(await until(() => webhooks.health(), 'ok')).toBeLessThan(1000);
  });
});
