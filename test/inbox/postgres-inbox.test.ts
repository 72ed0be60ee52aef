/**
 * What the PostgreSQL inbox (src/stores/postgres/index.ts) does beyond the Inbox contract, against the run's
 * throw-away cluster: its options, the pools it makes or is given, how a waiting claim wakes (NOTIFY counts,
 * due retries, the poll), several leases in one turn, and a schema that failed to migrate (found untested by
 * mutation testing, tools/mutation/results.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox, InboxClaim } from '../../src/delivery/port.js';
import { migratePostgresInbox, postgresInbox, SCHEMA_VERSION, type PostgresInboxOptions } from '../../src/stores/postgres/index.js';
import { entry } from './contract.js';
import { postgresDatabase } from '../support/postgres-server.js';

const database = postgresDatabase();
let serial = 0;
const fresh = () => `pi_${process.pid}_${++serial}`;

const opened: Inbox[] = [];
const ends: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
  await Promise.all(ends.splice(0).map((end) => end().catch(() => undefined)));
});
function open(options: Partial<PostgresInboxOptions> = {}): Inbox & { schema: string } {
  const schema = options.schema ?? fresh();
  const inbox = postgresInbox({ connectionString: database.url, schema, ...options });
  opened.push(inbox);
  return Object.assign(inbox, { schema });
}
async function sql(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  ends.push(() => client.end());
  return client;
}
function pool(config: pg.PoolConfig = {}): pg.Pool {
  const made = new pg.Pool({ connectionString: database.url, ...config });
  ends.push(() => made.end());
  return made;
}
/** Backends of this database whose last statement matches `like`, as pg_stat_activity shows them. */
async function backends(client: pg.Client, like: string, extra = ''): Promise<number> {
  const { rows } = await client.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1 ${extra}`,
    [like],
  );
  return (rows[0] as { n: number }).n;
}
const LEASE = { leaseMs: 30_000, waitMs: 0 };

describe('postgresInbox options', () => {
  it('says what it needs: connectionString or pool, a positive windowMs', () => {
    const needs = 'postgresInbox needs `connectionString` (postgres://user@host:5432/db) or `pool` (a pg.Pool).';
    expect(() => postgresInbox(undefined as unknown as PostgresInboxOptions)).toThrow(needs);
    expect(() => postgresInbox({ connectionString: '' })).toThrow(needs);
    for (const windowMs of [0, -1, Number.NaN]) {
      expect(() => postgresInbox({ connectionString: database.url, windowMs })).toThrow('postgresInbox: `windowMs` must be a positive number of milliseconds.');
    }
    expect(() => postgresInbox({ pool: pool(), schema: 'no-dashes' })).toThrow(/plain SQL name/);
  });

  it('a pool alone is enough; the inbox uses its settings for its own connections and leaves it open', async () => {
    const given = pool({ max: 1, application_name: 'given-pool', options: '-c search_path=public' });
    const schema = fresh();
    const inbox = postgresInbox({ pool: given, schema });
    expect(await inbox.put(entry())).toBe('stored');
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 50 })).toMatchObject({ attempt: 1 });
    const client = await sql();
    // The worker's connection and the listening one were made with the pool's settings.
    expect(await backends(client, `LISTEN "${schema}.inbox"`, `AND application_name = 'given-pool'`)).toBe(1);
    expect(await backends(client, `UPDATE "${schema}".inbox AS i SET state = 1%`, `AND application_name = 'given-pool'`)).toBe(1);
    await inbox.close();
    await inbox.close(); // twice: nothing more to do
    expect((await given.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('poolSize bounds the connections of the pool it makes', async () => {
    const inbox = open({ poolSize: 1 });
    await inbox.stats();
    const locker = await sql();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${inbox.schema}.inbox IN ACCESS EXCLUSIVE MODE`);
    const blocked = [inbox.stats(), inbox.stats(), inbox.stats()];
    await sleep(300);
    const client = await sql();
    expect(await backends(client, 'SELECT state, count(*)::int AS n FROM%', `AND wait_event_type = 'Lock'`)).toBe(1);
    await locker.query('COMMIT');
    await Promise.all(blocked);
  });

  it('statementTimeoutMs cancels a blocked put on the server, at about that time; 1 500 ms by default', async () => {
    for (const [statementTimeoutMs, least, most] of [
      [200, 150, 1200],
      [undefined, 1400, 4000],
    ] as const) {
      const inbox = open(statementTimeoutMs === undefined ? {} : { statementTimeoutMs });
      await inbox.stats();
      const locker = await sql();
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${inbox.schema}.inbox IN SHARE ROW EXCLUSIVE MODE`);
      const started = Date.now();
      await expect(inbox.put(entry())).rejects.toThrow(/statement timeout/);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(least);
      expect(took).toBeLessThan(most);
      await locker.query('COMMIT');
    }
  });

  it('an inbox never used touches nothing: no schema, even after its background expiry ran', async () => {
    const inbox = open();
    await sleep(2200); // two expiry rounds: one may come late on a busy machine
    const client = await sql();
    expect((await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [inbox.schema])).rows).toEqual([]);
    await inbox.close();
  });

  it('a schema that failed to migrate is tried again by the next statement', async () => {
    const schema = fresh();
    const client = await sql();
    await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.schema_version (version integer NOT NULL); INSERT INTO ${schema}.schema_version VALUES (${SCHEMA_VERSION + 1})`);
    const inbox = open({ schema });
    await expect(inbox.stats()).rejects.toThrow(/newer than this chat-webhooks knows/);
    await client.query(`UPDATE ${schema}.schema_version SET version = 0`);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
  });

  it('migratePostgresInbox makes the schema `chat_webhooks` by default, then finds it current, and ends its pool', async () => {
    const client = await sql();
    await client.query('DROP SCHEMA IF EXISTS chat_webhooks CASCADE');
    const connections = async () => Number((await client.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()`)).rows[0].n);
    const before = await connections();
    expect(await migratePostgresInbox({ connectionString: database.url })).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(await migratePostgresInbox({ connectionString: database.url, schema: 'chat_webhooks' })).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    expect((await client.query('SELECT version FROM chat_webhooks.schema_version')).rows).toEqual([{ version: SCHEMA_VERSION }]);
    await sleep(100);
    expect(await connections()).toBe(before);
    // The inbox's own default is the same schema.
    const inbox = postgresInbox({ connectionString: database.url });
    opened.push(inbox);
    expect(await inbox.put(entry('in-default-schema'))).toBe('stored');
    expect((await client.query('SELECT key FROM chat_webhooks.inbox')).rows).toEqual([{ key: 'in-default-schema' }]);
  });
});

describe('postgresInbox: waking waiting claims', () => {
  it('a batch of n puts from another process wakes n waiting claims at once', async () => {
    const schema = fresh();
    const worker = open({ schema, pollMs: 60_000 });
    const receiver = open({ schema });
    await receiver.stats();
    const waits = Array.from({ length: 3 }, () => worker.claim({ leaseMs: 30_000, waitMs: 20_000 }));
    await sleep(300);
    const started = Date.now();
    const entries = [entry(), entry(), entry()];
    expect(await Promise.all(entries.map((e) => receiver.put(e)))).toEqual(['stored', 'stored', 'stored']);
    const claims = await Promise.all(waits);
    expect(claims.map((claim) => claim?.key).sort()).toEqual(entries.map((e) => e.key).sort());
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('retry() of dead entries wakes a waiting claim in another process', async () => {
    const schema = fresh();
    const worker = open({ schema, pollMs: 60_000 });
    const admin = open({ schema });
    const e = entry();
    await admin.put(e);
    const claim = await admin.claim(LEASE);
    await admin.fail(claim!, { dead: true, error: 'boom' });
    await worker.stats();
    const waiting = worker.claim({ leaseMs: 30_000, waitMs: 20_000 });
    await sleep(300);
    const started = Date.now();
    expect(await admin.retry()).toBe(1);
    expect((await waiting)?.key).toBe(e.key);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a retry falling due wakes a waiting claim then, not at the poll', async () => {
    const inbox = open({ pollMs: 60_000 });
    const e = entry();
    await inbox.put(e);
    const first = await inbox.claim(LEASE);
    const started = Date.now();
    await inbox.fail(first!, { retryAt: started + 400, error: 'later' });
    const again = await inbox.claim({ leaseMs: 30_000, waitMs: 10_000 });
    expect(again).toMatchObject({ key: e.key, attempt: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(4000);
    // Another retry later: the next due time is read again, not the one of the last turn.
    const later = Date.now();
    await inbox.fail(again!, { retryAt: later + 300, error: 'later again' });
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 10_000 })).toMatchObject({ key: e.key, attempt: 3 });
    expect(Date.now() - later).toBeLessThan(4000);
  });

  it('an entry written without a notification is found by the poll (2 s by default), not before', async () => {
    const inbox = open();
    await inbox.stats();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 10_000 });
    await sleep(200);
    const started = Date.now();
    const client = await sql();
    await client.query(`INSERT INTO ${inbox.schema}.inbox (key, trigger, state, due, received_at, raw_body) VALUES ('quiet', 'message_sent', 0, 0, 0, '{}')`);
    const claim = await waiting;
    expect(claim?.key).toBe('quiet');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('a claim that does not wait opens no listening connection; one with an aborted signal looks once', async () => {
    const inbox = open();
    expect(await inbox.claim(LEASE)).toBeUndefined();
    const client = await sql();
    expect(await backends(client, `LISTEN "${inbox.schema}.inbox"`)).toBe(0);
    const started = Date.now();
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 10_000, signal: AbortSignal.abort() })).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('postgresInbox: claims and admin', () => {
  it('claims of one turn with different leases each get their own', async () => {
    const inbox = open();
    await Promise.all([inbox.put(entry()), inbox.put(entry())]);
    const [short, long] = await Promise.all([inbox.claim({ leaseMs: 200, waitMs: 0 }), inbox.claim({ leaseMs: 30_000, waitMs: 0 })]);
    expect(short).toBeDefined();
    expect(long).toBeDefined();
    expect(short!.key).not.toBe(long!.key);
    await sleep(400);
    const again = await inbox.claim(LEASE);
    expect(again).toMatchObject({ key: short!.key, attempt: 2 });
    expect(await inbox.claim(LEASE)).toBeUndefined();
  });

  it('refuses a body that is no JSON object, and every call once closed, saying so', async () => {
    const inbox = open();
    await expect(inbox.put({ ...entry(), rawBody: 'not json' })).rejects.toThrow('The PostgreSQL inbox stores an event as its raw body, and this one has no JSON text.');
    await inbox.close();
    const closed = 'The PostgreSQL inbox is closed.';
    await expect(inbox.put(entry())).rejects.toThrow(closed);
    await expect(inbox.claim(LEASE)).rejects.toThrow(closed);
    await expect(inbox.ping!()).rejects.toThrow(closed);
    await expect(inbox.oldestPendingAt!()).rejects.toThrow(closed);
  });

  it('a listing has lastError only when there was one', async () => {
    const inbox = open();
    const [e, f] = [entry(), entry()];
    await inbox.put(e);
    await inbox.put(f);
    await inbox.fail((await inbox.claim(LEASE))!, { dead: true, error: 'Error: boom' });
    const [pending] = await inbox.list({ state: 'pending' });
    expect(pending).not.toHaveProperty('lastError');
    expect(pending).toMatchObject({ state: 'pending', attempts: 0, rawBody: expect.any(String) });
    expect((await inbox.list({ state: 'dead' }))[0]).toMatchObject({ state: 'dead', attempts: 1, lastError: 'Error: boom' });
  });

  it('retry() that revived nothing notifies nobody; one that did, with the count', async () => {
    const inbox = open();
    await inbox.stats();
    const listener = await sql();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(String(message.payload)));
    await listener.query(`LISTEN "${inbox.schema}.inbox"`);
    expect(await inbox.retry()).toBe(0);
    expect(await inbox.retry(['nothing-here'])).toBe(0);
    await sleep(200);
    expect(heard).toEqual([]);
    await inbox.put(entry());
    await sleep(100);
    heard.length = 0; // the put's own
    await inbox.fail((await inbox.claim(LEASE))!, { dead: true, error: 'x' });
    expect(await inbox.retry()).toBe(1);
    await sleep(200);
    expect(heard).toEqual(['1']);
  });

  it('retry(keys) over more keys than one statement takes, and list() without a limit shows 100', async () => {
    const given = pool({ max: 2 });
    const sizes: number[] = [];
    const query = given.query.bind(given) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    (given as unknown as { query: typeof query }).query = async (config: pg.QueryConfig) => {
      const result = await query(config);
      if (/ANY\(\$2::text\[\]\)/.test(config.text)) sizes.push((config.values?.[1] as string[]).length);
      return result;
    };
    const inbox = open({ pool: given, connectionString: undefined });
    await inbox.stats();
    const client = await sql();
    await client.query(
      `INSERT INTO ${inbox.schema}.inbox (key, trigger, state, due, received_at, attempts, last_error, raw_body)
       SELECT 'dead-' || n, 'message_sent', 3, n, n, 5, 'x', '{"trigger":"message_sent"}' FROM generate_series(1, 2100) AS n`,
    );
    expect(await inbox.list({ state: 'dead' })).toHaveLength(100);
    const keys = Array.from({ length: 2100 }, (_, i) => `dead-${i + 1}`);
    expect(await inbox.retry([...keys.slice(0, 2050), 'no-such-key'])).toBe(2050);
    expect(sizes).toEqual([1000, 1000, 51]);
    expect(await inbox.stats()).toMatchObject({ pending: 2050, dead: 50 });
    expect((await inbox.list({ state: 'dead', limit: 100 })).map((listing) => listing.key)).toEqual(keys.slice(2050));
  });

  it('puts of one turn in two schemas on one pool go each to its own table', async () => {
    const shared = pool({ max: 2 });
    const a = open({ pool: shared, connectionString: undefined });
    const b = open({ pool: shared, connectionString: undefined });
    for (let round = 0; round < 2; round++) {
      const [ea, eb] = [entry(), entry()];
      expect(await Promise.all([a.put(ea), b.put(eb), a.put(entry()), b.put(entry())])).toEqual(['stored', 'stored', 'stored', 'stored']);
      expect((await a.list({ state: 'pending' })).map((listing) => listing.key)).toContain(ea.key);
      expect((await b.list({ state: 'pending' })).map((listing) => listing.key)).not.toContain(ea.key);
    }
  });

  it('completions and repeated puts of the same keys, given in opposite orders, never deadlock', async () => {
    const schema = fresh();
    const [receiver, worker] = [open({ schema }), open({ schema })];
    const keys = Array.from({ length: 1000 }, (_, i) => `c-${String(i).padStart(4, '0')}`);
    await Promise.all(keys.map((key) => receiver.put(entry(key))));
    const claims = (await Promise.all(keys.map(() => worker.claim(LEASE)))) as InboxClaim[];
    claims.sort((x, y) => (x.key < y.key ? 1 : -1)); // completed last key first
    const locker = await sql();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${schema}.inbox IN SHARE ROW EXCLUSIVE MODE`);
    const completing = Promise.all(claims.map((claim) => worker.complete(claim)));
    const repeating = Promise.all(keys.map((key) => receiver.put(entry(key))));
    await sleep(100);
    await locker.query('COMMIT');
    await completing;
    expect((await repeating).every((result) => result === 'duplicate')).toBe(true);
    expect(await worker.stats()).toMatchObject({ done: 1000, running: 0 });
  });

  it('receivers putting the same keys in opposite orders never deadlock', async () => {
    const schema = fresh();
    const [a, b] = [open({ schema }), open({ schema })];
    await Promise.all([a.stats(), b.stats()]);
    const locker = await sql();
    for (let round = 0; round < 2; round++) {
      // As many as one statement takes: the two overlap for long enough to meet in the middle.
      const keys = Array.from({ length: 1000 }, (_, i) => `r${round}-${String(i).padStart(4, '0')}`);
      // Both statements wait behind a lock, then run side by side.
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema}.inbox IN SHARE ROW EXCLUSIVE MODE`);
      const putting = Promise.all([...keys.map((key) => a.put(entry(key))), ...[...keys].reverse().map((key) => b.put(entry(key)))]);
      await sleep(100);
      await locker.query('COMMIT');
      const results = await putting;
      expect(results.filter((result) => result === 'stored')).toHaveLength(1000);
    }
  });
});
