/**
 * `transaction: true` against a hostile handler: one that ends the transaction itself through
 * `context.transaction.query` (`ROLLBACK`, `COMMIT`, or hidden after another statement). Whatever it sends, no
 * entry may be marked done without its effects. Against the run's throw-away cluster, with real workers.
 */
import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/index.js';
import { entry } from '../inbox/contract.js';
import { transactionBench, until } from '../support/postgres-transactions.js';

const { client, setup, closing } = transactionBench('txh');

type Handler = (transaction: { query(text: string, values?: unknown[]): Promise<unknown> }, key: string, attempt: number, effects: string) => Promise<void>;

/** Runs 3 events whose first attempt's handler writes, sends `statement` itself and returns as if all went well. */
function runWith(statement: string): Promise<{ effects: Array<{ key: string; attempt: number }>; errors: string[] }> {
  return runHandler(async (transaction, key, attempt, effects) => {
    await transaction.query(`INSERT INTO ${effects} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
    if (attempt === 1) await transaction.query(statement);
  });
}

async function runHandler(handler: Handler): Promise<{ effects: Array<{ key: string; attempt: number }>; errors: string[] }> {
  const { inbox, effects, schema } = await setup();
  const errors: string[] = [];
  const worker = createWorker({ inbox, transaction: true, concurrency: 2, closeInbox: false, retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 }, logger: { error: (_o: unknown, m: string) => void errors.push(m) } })
    .on('message_sent', (_event, { key, attempt, transaction }) => handler(transaction, key, attempt, effects))
    .onError(() => undefined)
    .start();
  closing.push(() => worker.close());
  for (let i = 0; i < 3; i++) await inbox.put(entry(`hostile-${schema}-${i}`));
  await until(async () => (await inbox.stats()).done === 3);
  const rows = (await client().query(`SELECT key, attempt FROM ${effects} ORDER BY key, attempt`)).rows;
  return { effects: rows, errors };
}

describe('a handler that ends its transaction itself', () => {
  it('ROLLBACK is refused: the attempt fails and the event runs again, never done without its effects', async () => {
    const { effects } = await runWith('ROLLBACK');
    expect(effects).toHaveLength(3);
    expect(effects.every((row) => row.attempt === 2)).toBe(true);
  });

  it('COMMIT is refused: its writes do not commit apart from the completion', async () => {
    const { effects } = await runWith('  commit');
    expect(effects).toHaveLength(3);
    expect(effects.every((row) => row.attempt === 2)).toBe(true);
  });

  it('a ROLLBACK after another statement (one query text): the completion sees the transaction gone and does not mark it done', async () => {
    const { effects } = await runWith('SELECT 1; ROLLBACK');
    expect(effects).toHaveLength(3);
    expect(effects.every((row) => row.attempt === 2)).toBe(true);
  }, 20_000);
});

describe('a handler that misuses its transaction otherwise', () => {
  it('throws a non-Error (undefined, a string) after writing: rolled back, run again', async () => {
    const { effects } = await runHandler(async (transaction, key, attempt, table) => {
      await transaction.query(`INSERT INTO ${table} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
      if (attempt === 1) throw key.endsWith('0') ? undefined : 'a string';
    });
    expect(effects).toHaveLength(3);
    expect(effects.every((row) => row.attempt === 2)).toBe(true);
  });

  it('returns without awaiting its parallel writes: they commit with the completion, in order', async () => {
    const { effects } = await runHandler(async (transaction, key, attempt, table) => {
      for (let i = 0; i < 3; i++) void transaction.query(`INSERT INTO ${table} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
    });
    expect(effects).toHaveLength(9);
  });

  it('catches a failed statement and returns: the aborted transaction is not completed as if it had worked', async () => {
    const { effects } = await runHandler(async (transaction, key, attempt, table) => {
      await transaction.query(`INSERT INTO ${table} (key, attempt) VALUES ($1, $2)`, [key, attempt]);
      if (attempt === 1) await transaction.query('SELECT 1/0').catch(() => undefined);
    });
    expect(effects).toHaveLength(3);
    expect(effects.every((row) => row.attempt === 2)).toBe(true);
  }, 20_000);
});
