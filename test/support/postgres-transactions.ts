/**
 * What the tests of `transaction: true` share (test/inbox/postgres-transaction.test.ts, test/hostile/
 * pg-transaction.test.ts): one client to the run's throw-away cluster, a fresh schema and effects table per test,
 * and the inboxes closed after each. Called at a test file's top level, it registers the hooks there.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import type { Inbox } from '../../src/delivery/port.js';
import { postgresDatabase } from './postgres-server.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 20 ms until it holds; throws after `ms`. */
export async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('Timed out waiting');
    await sleep(20);
  }
}

export interface TransactionBench {
  readonly database: ReturnType<typeof postgresDatabase>;
  /** The test file's own client (connected before its tests). */
  client(): pg.Client;
  /** A fresh schema's inbox, and an effects table (no unique constraint: a double would show). */
  setup(pollMs?: number): Promise<{ inbox: Inbox; effects: string; schema: string }>;
  /** Run after the test, in reverse order (workers before their inbox). */
  closing: Array<() => Promise<unknown>>;
}

export function transactionBench(prefix: string): TransactionBench {
  const database = postgresDatabase();
  let serial = 0;
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(() => client.end());
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
  });
  async function setup(pollMs = 50) {
    const schema = `${prefix}_${process.pid}_${++serial}`;
    const effects = `${schema}_effects`;
    await client.query(`CREATE TABLE ${effects} (key text NOT NULL, attempt int NOT NULL)`);
    const inbox = postgresInbox({ connectionString: database.url, schema, pollMs });
    closing.push(() => inbox.close());
    return { inbox, effects, schema };
  }
  return { database, client: () => client, setup, closing };
}
