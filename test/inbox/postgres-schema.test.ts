/**
 * The PostgreSQL inbox's migrations (src/stores/postgres/schema.ts) on their own, against the run's throw-away
 * cluster: the schema name check, the printed script, the advisory lock, and what `migrate` leaves behind when
 * it refuses (found untested by mutation testing, tools/mutation/results.md).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { lockSql, migrate, migrationScript, migrationSql, quotedSchema, SCHEMA_VERSION } from '../../src/stores/postgres/schema.js';
import { postgresDatabase } from '../support/postgres-server.js';

const database = postgresDatabase();
let serial = 0;
const fresh = () => `ms_${process.pid}_${++serial}`;

const clients: pg.Client[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
  await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));
});
async function sql(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  clients.push(client);
  return client;
}
function pool(max = 1): pg.Pool {
  const made = new pg.Pool({ connectionString: database.url, max });
  pools.push(made);
  return made;
}
const versionOf = async (client: pg.Client, schema: string) =>
  (await client.query(`SELECT version FROM ${schema}.schema_version ORDER BY version`)).rows.map((row: { version: number }) => row.version);

describe('quotedSchema', () => {
  it('takes plain SQL names up to 63 characters, and quotes them', () => {
    for (const name of ['a', '_', 'chat_webhooks', 'A9_z', `a${'b'.repeat(62)}`]) expect(quotedSchema(name)).toBe(`"${name}"`);
  });

  it('refuses anything else, naming it', () => {
    for (const name of ['', '9a', 'a-b', 'a b', ' a', 'a;', ';a', 'a"b', "a'b", 'é', `a${'b'.repeat(63)}`]) {
      expect(() => quotedSchema(name)).toThrow(`postgresInbox: \`schema\` must be a plain SQL name (letters, digits, _), not ${JSON.stringify(name)}.`);
    }
    // Not a string, even one whose text would pass.
    expect(() => quotedSchema(['abc'] as unknown as string)).toThrow(TypeError);
    expect(() => quotedSchema({ toString: () => 'abc' } as unknown as string)).toThrow(/plain SQL name/);
  });
});

describe('the migration script', () => {
  it('is one transaction under the lock, each migration numbered, ending with a newline', () => {
    const script = migrationScript('s1');
    const lines = script.split('\n');
    expect(lines[0]).toBe('BEGIN;');
    expect(lines[1]).toBe(`${lockSql('s1')};`);
    expect(lines.at(-2)).toBe('COMMIT;');
    expect(lines.at(-1)).toBe('');
    expect(script).toContain('CREATE SCHEMA IF NOT EXISTS "s1";\nCREATE TABLE IF NOT EXISTS "s1".schema_version (version integer NOT NULL);\n-- version 1\nCREATE TABLE IF NOT EXISTS "s1".inbox (');
    expect(script.match(/^-- version \d+$/gm)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => `-- version ${i + 1}`));
  });

  it('from a version, holds only the later migrations, numbered on from there', () => {
    expect(migrationSql('s1', SCHEMA_VERSION)).not.toMatch(/-- version|CREATE TABLE IF NOT EXISTS "s1".inbox/);
    expect(migrationSql('s1', SCHEMA_VERSION - 1)).toContain(`-- version ${SCHEMA_VERSION}\n`);
    expect(migrationSql('s1')).toBe(migrationSql('s1', 0));
  });

  it('run on a database a newer version migrated, leaves its version as it is', async () => {
    const schema = fresh();
    const client = await sql();
    await client.query(migrationScript(schema));
    expect(await versionOf(client, schema)).toEqual([SCHEMA_VERSION]);
    await client.query(`UPDATE ${schema}.schema_version SET version = ${SCHEMA_VERSION + 1}`);
    await client.query(migrationScript(schema));
    expect(await versionOf(client, schema)).toEqual([SCHEMA_VERSION + 1]);
    // An older row left beside it (a version table written by hand) is cleared; the newest stays.
    await client.query(`INSERT INTO ${schema}.schema_version VALUES (0)`);
    await client.query(migrationScript(schema));
    expect(await versionOf(client, schema)).toEqual([SCHEMA_VERSION + 1]);
  });

  it('the lock is stable across versions: hashtext of "chat-webhooks:" and the schema name, one per schema', async () => {
    const client = await sql();
    const other = await sql();
    await client.query('BEGIN');
    await client.query(lockSql('s_lock'));
    const held = async (text: string) =>
      !(await other.query<{ free: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS free`, [text])).rows[0]!.free;
    expect(await held('chat-webhooks:s_lock')).toBe(true);
    expect(await held('chat-webhooks:s_other')).toBe(false);
    await client.query('ROLLBACK');
    // A name with a quote is written as an SQL literal (lockSql is exported; the schema check is the caller's).
    await client.query('BEGIN');
    await client.query(lockSql("o'clock"));
    expect(await held("chat-webhooks:o'clock")).toBe(true);
    await client.query('ROLLBACK');
  });
});

describe('migrate', () => {
  it('makes a fresh schema, then finds it current without a transaction', async () => {
    const schema = fresh();
    const migrations = pool();
    expect(await migrate(migrations, schema)).toEqual({ from: 0, to: SCHEMA_VERSION });
    const client = await sql();
    expect(await versionOf(client, schema)).toEqual([SCHEMA_VERSION]);
    expect(await migrate(migrations, schema)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    // Its one connection went back to the pool each time.
    expect(migrations.idleCount).toBe(1);
    expect(migrations.totalCount).toBe(1);
  });

  it('upgrades from the version found, under the lock, in one transaction', async () => {
    const schema = fresh();
    const client = await sql();
    await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.schema_version (version integer NOT NULL); INSERT INTO ${schema}.schema_version VALUES (0)`);
    expect(await migrate(pool(), schema)).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(await versionOf(client, schema)).toEqual([SCHEMA_VERSION]);
    // A version table without rows counts as version 0.
    const empty = fresh();
    await client.query(`CREATE SCHEMA ${empty}; CREATE TABLE ${empty}.schema_version (version integer NOT NULL)`);
    expect(await migrate(pool(), empty)).toEqual({ from: 0, to: SCHEMA_VERSION });
  });

  it('waits for another migration of the same schema holding the lock', async () => {
    const schema = fresh();
    const client = await sql();
    await client.query('BEGIN');
    await client.query(lockSql(schema));
    let done = false;
    const migrating = migrate(pool(), schema).then((result) => ((done = true), result));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    await client.query('COMMIT');
    expect(await migrating).toEqual({ from: 0, to: SCHEMA_VERSION });
  });

  it('refuses a newer schema, rolls back (the lock is free again), and returns its connection', async () => {
    const schema = fresh();
    const client = await sql();
    await client.query(migrationScript(schema));
    await client.query(`UPDATE ${schema}.schema_version SET version = ${SCHEMA_VERSION + 1}`);
    const migrations = pool();
    await expect(migrate(migrations, schema)).rejects.toThrow(
      `The inbox schema "${schema}" is at version ${SCHEMA_VERSION + 1}, newer than this chat-webhooks knows (${SCHEMA_VERSION}): upgrade chat-webhooks.`,
    );
    const free = await client.query<{ free: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS free`, [`chat-webhooks:${schema}`]);
    expect(free.rows[0]!.free).toBe(true);
    await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`chat-webhooks:${schema}`]);
    expect(migrations.idleCount).toBe(1);
    // The pool's connection is in no transaction.
    expect((await migrations.query<{ state: string }>(`SELECT now() = statement_timestamp() AS state`)).rows[0]!.state).toBe(true);
  });

  it('a failed statement rolls the migration back whole', async () => {
    const schema = fresh();
    const client = await sql();
    // An `inbox` table of someone else's: its index cannot be made, so nothing of the migration stays.
    await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.inbox (x int)`);
    await expect(migrate(pool(), schema)).rejects.toThrow(/"state" does not exist/);
    const tables = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
    expect(tables.rows).toEqual([{ table_name: 'inbox' }]);
  });
});
