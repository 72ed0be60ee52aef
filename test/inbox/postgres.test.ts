/** The Inbox contract against PostgreSQL (a real server: the run's shared throw-away cluster), and what is PostgreSQL's own. */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createWebhooks, type WebhookError } from '../../src/index.js';
import type { Inbox } from '../../src/delivery/port.js';
import { buildRequest } from '../../src/testing/index.js';
import { migrationScript, postgresInbox, SCHEMA_VERSION, type PostgresInboxOptions } from '../../src/stores/postgres/index.js';
import { entry, inboxContract } from './contract.js';
import { postgresDatabase } from '../support/postgres-server.js';

const database = postgresDatabase();
let serial = 0;
const LEASE = { leaseMs: 30_000, waitMs: 0 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const schemaOf = (name: string) => `t_${name.replace(/\W/g, '_')}`;
inboxContract('postgresInbox', {
  durable: true,
  leaseSlackMs: 100,
  open: ({ windowMs, name } = {}) => postgresInbox({ connectionString: database.url, schema: schemaOf(name ?? String(++serial)), windowMs }),
  cliArgs: (name) => ['--postgres', database.url, '--schema', schemaOf(name)],
  /** Dead rows as a claim and a failure leave them, keys dead-0…, in one INSERT. */
  async seedDead(name, count) {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const schema = schemaOf(name);
      await client.query(migrationScript(schema));
      await client.query(
        `INSERT INTO ${schema}.inbox (key, trigger, state, due, received_at, attempts, last_error, raw_body)
         SELECT 'dead-' || n, 'message_sent', 3, $1, $1, 1, 'seeded',
           '{"trigger":"message_sent","appId":"app","data":{"message":{"id":"dead-' || n || '"}}}'
         FROM generate_series(0, $2 - 1) AS n`,
        [Date.now(), count],
      );
    } finally {
      await client.end();
    }
  },
});

describe('postgresInbox: PostgreSQL itself', () => {
  const opened: Inbox[] = [];
  const clients: pg.Client[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
    await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
  });
  function open(options: Partial<PostgresInboxOptions> = {}): Inbox {
    const inbox = postgresInbox({ connectionString: database.url, schema: `p_${++serial}`, ...options });
    opened.push(inbox);
    return inbox;
  }
  async function sql(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    clients.push(client);
    return client;
  }

  it('keeps the traceparent with the entry and returns it with each claim', async () => {
    const inbox = open();
    const traced = { ...entry(), traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await inbox.put(traced);
    await inbox.put(entry());
    const claims = [await inbox.claim(LEASE), await inbox.claim(LEASE)];
    const mine = claims.find((claim) => claim?.key === traced.key);
    expect(mine?.traceparent).toBe(traced.traceparent);
    expect(claims.find((claim) => claim?.key !== traced.key)).not.toHaveProperty('traceparent');
  });

  it('the puts of one turn are one INSERT statement; each answered from what it returned', async () => {
    const pool = new pg.Pool({ connectionString: database.url });
    const sent: string[] = [];
    const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    (pool as unknown as { query: typeof query }).query = (config: pg.QueryConfig) => {
      sent.push(typeof config === 'string' ? config : config.text);
      return query(config);
    };
    const inbox = open({ pool });
    await inbox.put(entry()); // the schema is made
    sent.length = 0;
    const known = entry();
    await inbox.put(known);
    sent.length = 0;
    const results = await Promise.all([inbox.put(known), ...Array.from({ length: 20 }, () => inbox.put(entry()))]);
    expect(results).toEqual(['duplicate', ...Array.from({ length: 20 }, () => 'stored')]);
    expect(sent.filter((text) => /INSERT INTO/.test(text))).toHaveLength(1);
    expect(sent).toHaveLength(1);
    await inbox.close();
    await pool.end();
  });

  for (const [end, expected] of [['COMMIT', 'duplicate'], ['ROLLBACK', 'stored']] as const) {
    it(`a put of a key another transaction inserted, uncommitted, waits for it: ${expected} after its ${end}`, async () => {
      const inbox = open();
      await inbox.stats();
      const other = await sql();
      const e = entry();
      await other.query('BEGIN');
      await other.query(`INSERT INTO p_${serial}.inbox (key, trigger, state, due, received_at, raw_body) VALUES ($1, 'm', 0, 0, 0, '{}')`, [e.key]);
      let answer: string | undefined;
      const put = inbox.put(e).then((result) => (answer = result));
      await sleep(200);
      expect(answer).toBeUndefined();
      await other.query(end);
      await put;
      expect(answer).toBe(expected);
    });
  }

  it('a put whose signal aborts before it is sent is dropped: it rejects, and nothing of it is stored', async () => {
    const inbox = open();
    await inbox.stats();
    await expect(inbox.put(entry(), { signal: AbortSignal.abort() })).rejects.toThrow(/gave up/);
    const locker = await sql();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE p_${serial}.inbox IN SHARE ROW EXCLUSIVE MODE`);
    const sent = [inbox.put(entry()), sleep(50).then(() => inbox.put(entry()))]; // two statements in flight, blocked
    await sleep(150);
    const giveUp = new AbortController();
    const waiting = inbox.put(entry(), { signal: giveUp.signal });
    await sleep(50);
    giveUp.abort();
    await expect(waiting).rejects.toThrow(/gave up/);
    await locker.query('COMMIT');
    expect(await Promise.all(sent)).toEqual(['stored', 'stored']);
    expect(await inbox.stats()).toEqual({ pending: 2, running: 0, done: 0, dead: 0 });
  });

  it('a put blocked past statementTimeoutMs is rejected and rolled back: nothing is retained', async () => {
    const inbox = open({ statementTimeoutMs: 300 });
    await inbox.stats();
    const locker = await sql();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE p_${serial}.inbox IN SHARE ROW EXCLUSIVE MODE`);
    const e = entry();
    await expect(inbox.put(e)).rejects.toThrow(/statement timeout/);
    await locker.query('COMMIT');
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    expect(await inbox.put(e)).toBe('stored');
  });

  it('retry() and purge() of 100 000 dead entries: statements of at most 1 000 rows each', async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    const counts: number[] = [];
    const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    (pool as unknown as { query: typeof query }).query = async (config: pg.QueryConfig) => {
      const result = await query(config);
      counts.push(Math.max(result.rowCount ?? 0, result.rows?.length ?? 0));
      return result;
    };
    const inbox = open({ pool });
    await inbox.stats();
    const client = await sql();
    await client.query(
      `INSERT INTO p_${serial}.inbox (key, trigger, state, due, received_at, attempts, last_error, raw_body)
       SELECT 'dead-' || n, 'message_sent', 3, 0, 0, 5, 'x', '{"trigger":"message_sent"}' FROM generate_series(1, 100000) AS n`,
    );
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 100_000 });
    counts.length = 0;
    expect(await inbox.retry()).toBe(100_000);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1000);
    expect(counts.length).toBeGreaterThanOrEqual(100);
    expect(await inbox.stats()).toEqual({ pending: 100_000, running: 0, done: 0, dead: 0 });
    counts.length = 0;
    expect(await inbox.purge({ state: 'pending' })).toBe(100_000);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1000);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    await inbox.close();
    await pool.end();
  }, 60_000);

  it('expired done rows are deleted in the background, in small batches', async () => {
    const inbox = open({ windowMs: 50 });
    await inbox.stats();
    const client = await sql();
    await client.query(
      `INSERT INTO p_${serial}.inbox (key, trigger, state, due, received_at) SELECT 'old-' || n, 'm', 2, 1, 0 FROM generate_series(1, 1200) AS n`,
    );
    const remaining = async () => Number((await client.query(`SELECT count(*) AS n FROM p_${serial}.inbox`)).rows[0].n);
    await sleep(1300);
    const afterOne = await remaining();
    expect(afterOne).toBeLessThan(1200);
    expect(afterOne).toBeGreaterThanOrEqual(200); // 500 a round: not all at once
    const until = Date.now() + 10_000;
    while ((await remaining()) > 0 && Date.now() < until) await sleep(200);
    expect(await remaining()).toBe(0);
  });

  it('two inboxes starting together on a fresh schema both work (the advisory lock serializes the migration)', async () => {
    const schema = `p_${++serial}`;
    const inboxes = Array.from({ length: 4 }, () => postgresInbox({ connectionString: database.url, schema }));
    opened.push(...inboxes);
    const results = await Promise.all(inboxes.map((inbox) => inbox.put(entry())));
    expect(results).toEqual(['stored', 'stored', 'stored', 'stored']);
    const client = await sql();
    expect((await client.query(`SELECT version FROM ${schema}.schema_version`)).rows).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it('upgrades a schema at an earlier version, and refuses one newer than it knows', async () => {
    const schema = `p_${++serial}`;
    const client = await sql();
    await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.schema_version (version integer NOT NULL); INSERT INTO ${schema}.schema_version VALUES (0)`);
    const inbox = postgresInbox({ connectionString: database.url, schema });
    opened.push(inbox);
    expect(await inbox.put(entry())).toBe('stored');
    expect((await client.query(`SELECT version FROM ${schema}.schema_version`)).rows).toEqual([{ version: SCHEMA_VERSION }]);
    await client.query(`UPDATE ${schema}.schema_version SET version = ${SCHEMA_VERSION + 1}`);
    const newer = postgresInbox({ connectionString: database.url, schema });
    opened.push(newer);
    await expect(newer.stats()).rejects.toThrow(/newer than this chat-webhooks knows/);
  });

  it('the migration script creates what the inbox needs, can run twice, and a role without CREATE rights then uses it', async () => {
    const schema = `p_${++serial}`;
    const client = await sql();
    await client.query(migrationScript(schema));
    await client.query(migrationScript(schema));
    const role = `app_${serial}_${process.pid}`;
    await client.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${schema} TO ${role};
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    await client.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    const inbox = postgresInbox({ connectionString: database.url.replace('postgres@', `${role}@`), schema });
    opened.push(inbox);
    expect(await inbox.put(entry())).toBe('stored');
    expect(await inbox.claim(LEASE)).toMatchObject({ attempt: 1 });
    expect(await inbox.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    const fresh = postgresInbox({ connectionString: database.url.replace('postgres@', `${role}@`), schema: `p_${++serial}` });
    opened.push(fresh);
    await expect(fresh.stats()).rejects.toThrow(/permission denied/);
  });

  it('a waiting worker is woken by NOTIFY from another process, and again after its listening connection was cut', async () => {
    const schema = `p_${++serial}`;
    const worker = postgresInbox({ connectionString: database.url, schema, pollMs: 60_000 });
    const receiver = postgresInbox({ connectionString: database.url, schema });
    opened.push(worker, receiver);
    await receiver.stats();
    const waiting = worker.claim({ leaseMs: 30_000, waitMs: 20_000 });
    await sleep(200);
    const started = Date.now();
    const first = entry();
    await receiver.put(first);
    expect((await waiting)?.key).toBe(first.key);
    expect(Date.now() - started).toBeLessThan(2000);

    const client = await sql();
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
    await sleep(500); // the listener notices and connects again
    const second = worker.claim({ leaseMs: 30_000, waitMs: 20_000 });
    await sleep(200);
    const again = entry();
    const putAt = Date.now();
    await receiver.put(again);
    expect((await second)?.key).toBe(again.key);
    expect(Date.now() - putAt).toBeLessThan(2000);
  });

  it('the options are checked', () => {
    expect(() => postgresInbox({} as PostgresInboxOptions)).toThrow(/connectionString/);
    expect(() => postgresInbox({ connectionString: database.url, schema: 'a; DROP TABLE x' })).toThrow(/plain SQL name/);
    expect(() => postgresInbox({ connectionString: database.url, windowMs: 0 })).toThrow(/windowMs/);
  });
});

describe('receiving into PostgreSQL: a commit that fails or is too slow', () => {
  const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
  const auth = { username: 'platform', password: 's3cret' };

  for (const [what, options] of [
    ['fails (cancelled by statementTimeoutMs)', { statementTimeoutMs: 300, commitTimeoutMs: 5000 }],
    ['exceeds commitTimeoutMs', { statementTimeoutMs: 900, commitTimeoutMs: 200 }],
  ] as const) {
    it(`a commit that ${what} is answered 503 with Retry-After, nothing is retained, and the resend is stored`, async () => {
      const schema = `r_${++serial}`;
      const inbox = postgresInbox({ connectionString: database.url, schema, statementTimeoutMs: options.statementTimeoutMs });
      const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false, commitTimeoutMs: options.commitTimeoutMs });
      const errors: WebhookError[] = [];
      webhooks.onError((error) => void errors.push(error));
      const locker = new pg.Client({ connectionString: database.url });
      await locker.connect();
      try {
        await inbox.stats();
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${schema}.inbox IN SHARE ROW EXCLUSIVE MODE`);
        const started = Date.now();
        const response = await webhooks.handle(buildRequest(body, { auth }));
        expect(response.status).toBe(503);
        expect(response.headers['retry-after']).toBeDefined();
        expect(Date.now() - started).toBeLessThan(Math.min(options.statementTimeoutMs, options.commitTimeoutMs) + 2000);
        await response.done;
        expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
        await sleep(options.statementTimeoutMs + 200); // the server has cancelled the statement by now
        await locker.query('COMMIT');
        expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
        const resent = await webhooks.handle(buildRequest(body, { auth }));
        expect(resent.status).toBe(200);
        expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
      } finally {
        await locker.end();
        await webhooks.close();
        await inbox.close();
      }
    });
  }
});
