/**
 * The PostgreSQL inbox's tables, as numbered migrations. `postgresInbox` applies the missing ones on first
 * use, in one transaction under an advisory lock (two processes starting together do not race; the second
 * finds the work done); `chat-webhooks inbox migrate --postgres URL` prints the same SQL, or applies it, for
 * teams whose application role may not create tables. Every step is idempotent (IF NOT EXISTS), so the
 * printed script can run on a database at any earlier version.
 *
 * A new version appends a migration (never edits one already released): an `ALTER TABLE … ADD COLUMN IF NOT
 * EXISTS`, say, and what it needs. A database newer than this code is refused (its rows might mean something
 * this version does not know).
 */

/** As much of a node-postgres pool as the migration needs (the declarations compile without pg installed). */
export interface MigrationPool {
  connect(): Promise<MigrationClient>;
}
interface MigrationClient {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  release(): void;
}

/** States as small integers: the (state, due) index stays compact. */
export const PENDING = 0;
export const RUNNING = 1;
export const DONE = 2;
export const DEAD = 3;

/** Each migration's statements, `S` standing for the quoted schema. Index + 1 is its version. */
const MIGRATIONS: ReadonlyArray<(s: string) => string> = [
  // 1: `due` means, by state: pending: when it may run; running: when its lease ends; done: when it is
  // forgotten; dead: when it died (milliseconds since the epoch). One index on (state, due) serves claiming,
  // lease recovery, expiry and the counts.
  (s) => `CREATE TABLE IF NOT EXISTS ${s}.inbox (
  key text PRIMARY KEY,
  trigger text NOT NULL,
  state smallint NOT NULL,
  due bigint NOT NULL,
  received_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  token text,
  last_error text,
  raw_body text,
  traceparent text
);
CREATE INDEX IF NOT EXISTS inbox_state_due ON ${s}.inbox (state, due);`,
  // 2: catch-up's leased locks and high-water marks (the port's "Coordination"), a row per name.
  (s) => `CREATE TABLE IF NOT EXISTS ${s}.coordination (
  name text PRIMARY KEY,
  holder text,
  expires bigint,
  mark bigint
);`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The schema name, checked (it is written into SQL) and quoted: a plain name of at most 63 characters. */
export function quotedSchema(schema: string): string {
  if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(`postgresInbox: \`schema\` must be a plain SQL name (letters, digits, _), not ${JSON.stringify(schema)}.`);
  }
  return `"${schema}"`;
}

/** The advisory lock's key: one per schema, so two inboxes in different schemas migrate independently. */
export function lockSql(schema: string): string {
  return `SELECT pg_advisory_xact_lock(hashtext('chat-webhooks:' || ${literal(schema)}))`;
}

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The statements that bring a schema from `from` (0: nothing there) to SCHEMA_VERSION, without the transaction. */
export function migrationSql(schema: string, from = 0): string {
  const s = quotedSchema(schema);
  const steps = MIGRATIONS.slice(from).map((step, index) => `-- version ${from + index + 1}\n${step(s)}`);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s};`,
    `CREATE TABLE IF NOT EXISTS ${s}.schema_version (version integer NOT NULL);`,
    ...steps,
    // Never lowers the number: this script run on a database a newer version migrated leaves it as it is.
    `DELETE FROM ${s}.schema_version WHERE version < ${SCHEMA_VERSION};`,
    `INSERT INTO ${s}.schema_version (version) SELECT ${SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM ${s}.schema_version);`,
  ].join('\n');
}

/**
 * The whole script `inbox migrate` prints: one transaction, under the same advisory lock as the inbox takes.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { migrationScript } from 'chat-webhooks/postgres';
 *
 * writeFileSync('migrations/chat-webhooks.sql', migrationScript('chat_webhooks')); // for your migration tool
 * ```
 */
export function migrationScript(schema: string): string {
  return [`BEGIN;`, `${lockSql(schema)};`, migrationSql(schema), `COMMIT;`, ''].join('\n');
}

/** The schema's version: 0 before the first migration (no version table). */
async function versionIn(client: MigrationClient, schema: string): Promise<number> {
  const table = `${quotedSchema(schema)}.schema_version`;
  const { rows } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
  if (!rows[0]?.present) return 0;
  // max() answers one row, NULL on an empty table.
  return (await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${table}`)).rows[0]!.version ?? 0;
}

/**
 * Brings the schema to SCHEMA_VERSION: a quick read when it is current (no lock, no DDL: the application's
 * role needs no CREATE right once migrated), else the missing steps in one transaction under the advisory
 * lock. Resolves the version found and the version now.
 */
export async function migrate(pool: MigrationPool, schema: string): Promise<{ from: number; to: number }> {
  const client = await pool.connect();
  try {
    const current = await versionIn(client, schema);
    if (current === SCHEMA_VERSION) return { from: current, to: current };
    await client.query('BEGIN');
    await client.query(lockSql(schema));
    const from = await versionIn(client, schema);
    if (from > SCHEMA_VERSION) {
      throw new Error(`The inbox schema "${schema}" is at version ${from}, newer than this chat-webhooks knows (${SCHEMA_VERSION}): upgrade chat-webhooks.`);
    }
    if (from < SCHEMA_VERSION) await client.query(migrationSql(schema, from));
    await client.query('COMMIT');
    return { from, to: SCHEMA_VERSION };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
