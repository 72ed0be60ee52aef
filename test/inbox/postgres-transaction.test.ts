/**
 * `transaction: true` (src/stores/postgres/transactions.ts, src/delivery/consume.ts): the handlers' writes
 * through `context.transaction` commit with the event's completion, and a throw or a timeout rolls both back
 * while the attempt, its error and the retry time stay. Against the run's throw-away cluster, with real
 * workers and a real receiver.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, createWebhooks, createWorker, memoryInbox, type WebhookError } from '../../src/index.js';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import type { Inbox } from '../../src/delivery/port.js';
import { entry } from './contract.js';
import { sleep, transactionBench, until } from '../support/postgres-transactions.js';

const { database, client, setup, closing } = transactionBench('tx');
const quiet = { logger: {} };

const rowsOf = async (effects: string) => (await client().query(`SELECT key, attempt FROM ${effects} ORDER BY key, attempt`)).rows;
const entryRow = async (schema: string, key: string) =>
  (await client().query(`SELECT state, attempts, last_error FROM ${schema}.inbox WHERE key = $1`, [key])).rows[0] as
    | { state: number; attempts: number; last_error: string | null }
    | undefined;

describe('transaction: true on postgresInbox', () => {
  it('commits what a handler wrote through context.transaction with the completion', async () => {
    const { inbox, effects, schema } = await setup();
    const worker = createWorker({ inbox, transaction: true, concurrency: 2, closeInbox: false })
      .on('message_sent', async (event, { key, attempt, transaction }) => {
        await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
        const { rows, rowCount } = await transaction.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${effects} WHERE key = $1`, [key]);
        // Its own write is visible inside the transaction.
        if (rowCount !== 1 || rows[0]!.n !== 1) throw new Error('not visible');
      })
      .start();
    closing.push(() => worker.close());
    for (let i = 0; i < 10; i++) await inbox.put(entry(`ok-${schema}-${i}`));
    await until(async () => (await inbox.stats()).done === 10);
    expect(await rowsOf(effects)).toHaveLength(10);
    expect(new Set((await rowsOf(effects)).map((row) => row.key)).size).toBe(10);
  });

  it('rolls back a throwing handler\'s writes; the attempt, its error and the retry stay, then dead after the last', async () => {
    const { inbox, effects, schema } = await setup();
    const errors: WebhookError[] = [];
    const worker = createWorker({ inbox, transaction: true, concurrency: 1, closeInbox: false, retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 }, ...quiet })
      .on('message_sent', async (_event, { key, attempt, transaction }) => {
        await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
        if (key.startsWith('always') || attempt === 1) throw new Error(`boom on ${attempt}`);
      })
      .onError((error) => void errors.push(error))
      .start();
    closing.push(() => worker.close());
    await inbox.put(entry('once-fails'));
    await inbox.put(entry('always-fails'));
    await until(async () => {
      const stats = await inbox.stats();
      return stats.done === 1 && stats.dead === 1;
    });
    // The first throws rolled back; only the second attempt of 'once-fails' committed its row.
    expect(await rowsOf(effects)).toEqual([{ key: 'once-fails', attempt: 2 }]);
    expect(await entryRow(schema, 'always-fails')).toEqual({ state: 3, attempts: 3, last_error: 'A handler for "message_sent" failed: boom on 3' });
    expect(errors.filter((e) => e.key === 'always-fails').map((e) => [e.attempt, e.willRetry])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
  });

  it('ends a hung handler at handlerTimeoutMs: its writes roll back, and a late query is refused', async () => {
    const { inbox, effects, schema } = await setup();
    let late: Promise<unknown> | undefined;
    const worker = createWorker({ inbox, transaction: true, concurrency: 1, closeInbox: false, handlerTimeoutMs: 300, retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 }, ...quiet })
      .on('message_sent', async (_event, { key, attempt, transaction }) => {
        await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
        if (attempt > 1) return;
        if (key === 'sleeps') await transaction.query('SELECT pg_sleep(20)'); // The server ends it (statement_timeout).
        await sleep(500);
        late = transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, 99)`, [key]).catch((error: Error) => error.message);
      })
      .start();
    closing.push(() => worker.close());
    const started = Date.now();
    await inbox.put(entry('hangs'));
    await inbox.put(entry('sleeps'));
    await until(async () => (await inbox.stats()).done === 2);
    expect(Date.now() - started).toBeLessThan(5000);
    await sleep(300);
    expect(await late).toMatch(/transaction has ended/);
    expect(await rowsOf(effects)).toEqual([
      { key: 'hangs', attempt: 2 },
      { key: 'sleeps', attempt: 2 },
    ]);
    expect((await entryRow(schema, 'hangs'))!.attempts).toBe(2);
  });

  it('keeps the entry locked while its handler runs: no other worker takes it, even past the lease', async () => {
    const { inbox, effects } = await setup();
    let runs = 0;
    const worker = createWorker({ inbox, transaction: true, concurrency: 1, closeInbox: false, leaseMs: 50 })
      .on('message_sent', async (_event, { key, transaction }) => {
        runs++;
        await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, 1)`, [key]);
        await sleep(2500); // Longer than the claim's own short lease (LOCK_GRACE_MS).
      })
      .start();
    closing.push(() => worker.close());
    await inbox.put(entry('slow'));
    await until(async () => runs === 1);
    await sleep(2200);
    // Another claim now finds the row due by its lease, but locked: it is skipped.
    expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toBeUndefined();
    await until(async () => (await inbox.stats()).done === 1);
    expect(runs).toBe(1);
    expect(await rowsOf(effects)).toHaveLength(1);
  });

  it('an idle worker does not look again every few milliseconds while a transaction holds a row past its lease', async () => {
    const { inbox, effects, schema } = await setup(1000);
    let running = false;
    const worker = createWorker({ inbox, transaction: true, concurrency: 6, closeInbox: false })
      .on('message_sent', async (_event, { key, transaction }) => {
        running = true;
        await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, 1)`, [key]);
        await sleep(5000);
      })
      .start();
    closing.push(() => worker.close());
    await inbox.put(entry('held'));
    await until(async () => running);
    // Scans of the inbox table by every backend (a backend reports its counts about once a second).
    const scans = async () =>
      Number((await client().query(`SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'inbox'`, [schema])).rows[0].n);
    await sleep(2500); // Past the claim's short lease (LOCK_GRACE_MS): the row is due, and locked.
    const before = await scans();
    await sleep(2000);
    // The other loops wait for a notification or pollMs (1 s here): a couple of looks each; with the locked
    // row counted as due they would look every 20 ms (LOCKED_RETRY_MS), for nothing.
    const looked = (await scans()) - before;
    console.log(`scans of the inbox in 2 s while a transaction held its row: ${looked}`);
    expect(looked).toBeLessThan(150);
    await until(async () => (await inbox.stats()).done === 1);
  });

  it('runs in the receiver\'s own worker: createWebhooks({ inbox, worker: { transaction: true } })', async () => {
    const { inbox, effects } = await setup();
    const auth = { username: 'platform', password: 's3cret' };
    const webhooks = createWebhooks({ auth, inbox, closeInbox: false, worker: { transaction: true, concurrency: 2 }, ...quiet });
    closing.push(() => webhooks.close());
    webhooks.on('message_sent', async (event, { key, transaction }) => {
      await transaction!.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, 1)`, [`${key}|${event.data.message.id}`]);
    });
    const body = JSON.stringify(createTestEvent('message_sent', { data: { message: { id: 'm-1' } } }));
    expect((await webhooks.handle(buildRequest(body, { auth }))).status).toBe(200);
    await until(async () => (await inbox.stats()).done === 1);
    expect((await rowsOf(effects)).map((row) => String(row.key).split('|')[1])).toEqual(['m-1']);
  });
});

describe('transaction: true connections', () => {
  it('one per handler in flight: the pool is sized from the workers\' concurrency, and a claim beyond it waits', async () => {
    const { inbox, schema } = await setup();
    const transactions = inbox.transactions!;
    const release = transactions.reserve(1);
    for (let i = 0; i < 2; i++) await inbox.put(entry(`pool-${schema}-${i}`));
    const first = await transactions.claimInTransaction({ leaseMs: 1000, waitMs: 0, timeoutMs: 5000 });
    expect(first).toBeDefined();
    let second: unknown;
    const waiting = transactions.claimInTransaction({ leaseMs: 1000, waitMs: 0, timeoutMs: 5000 }).then((claim) => (second = claim));
    await sleep(300);
    expect(second).toBeUndefined(); // Waiting for the one connection, not failed.
    await first!.complete();
    await waiting;
    expect(second).toBeDefined();
    await (second as { complete(): Promise<void> }).complete();
    release();
    expect((await inbox.stats()).done).toBe(2);
  });

  it('keeps no session state: nothing prepared, and commits flushed (not the worker\'s synchronous_commit = off)', async () => {
    const { inbox, effects, schema } = await setup();
    const seen: Array<{ prepared: number; sync: string; pid: number }> = [];
    const handler = async (_event: unknown, { key, transaction }: { key: string; transaction: import('../../src/index.js').HandlerTransaction }) => {
      await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, 1)`, [key]);
      const { rows } = await transaction.query<{ prepared: number; sync: string; pid: number }>(
        "SELECT (SELECT count(*) FROM pg_prepared_statements)::int AS prepared, current_setting('synchronous_commit') AS sync, pg_backend_pid() AS pid",
      );
      seen.push(rows[0]!);
      await sleep(30);
    };
    const workers = [2, 3].map((concurrency) => createWorker({ inbox, transaction: true, concurrency, closeInbox: false }).on('message_sent', handler).start());
    for (const worker of workers) closing.push(() => worker.close());
    for (let i = 0; i < 40; i++) await inbox.put(entry(`conn-${schema}-${i}`));
    await until(async () => (await inbox.stats()).done === 40);
    // A pooler in transaction mode may give each transaction another server connection: none relies on the last.
    expect(seen.every((row) => row.prepared === 0)).toBe(true);
    // The handlers' writes are the application's data: not the worker's own `synchronous_commit = off`.
    expect(seen.every((row) => row.sync === 'on')).toBe(true);
  });
});

describe('transaction: true elsewhere', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tx-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is refused with a ConfigurationError saying why, for memory, SQLite and Redis inboxes', async () => {
    const inboxes: Array<[Inbox, RegExp]> = [
      [memoryInbox(), /needs postgresInbox.*memory inbox keeps its entries in this process/],
      [sqliteInbox({ path: join(dir, 'x.sqlite') }), /needs postgresInbox.*SQLite has one writer at a time/],
      [redisInbox({ url: 'redis://127.0.0.1:1' }), /needs postgresInbox.*Redis cannot commit/],
    ];
    for (const [inbox, message] of inboxes) {
      expect(() => createWorker({ inbox, transaction: true })).toThrow(ConfigurationError);
      expect(() => createWorker({ inbox, transaction: true })).toThrow(message);
      expect(() => createWebhooks({ auth: false, inbox, worker: { transaction: true } })).toThrow(message);
      await inbox.close().catch(() => undefined);
    }
    const { inbox } = await setup();
    expect(() => createWorker({ inbox, transaction: 'yes' as never })).toThrow('`transaction` must be true or false.');
  });
});
