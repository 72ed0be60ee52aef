/**
 * catchUp (issue 35 item 3) on a server's inbox: two receivers starting on one Redis (or PostgreSQL) inbox
 * recover an outage once between them through its lock, and raise its mark; a run that failed in a receiver that
 * stopped is taken up by another one (SQLite and the rest: catch-up.test.ts).
 */
import { afterEach, describe, it } from 'vitest';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { postgresDatabase } from '../support/postgres-server.js';
import { redisPerSuite } from '../support/redis-server.js';
import { failedRunTakenUp, twoReceiversStart } from './catch-up-scenario.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of closing.splice(0).reverse()) await thing.close();
});

describe('catchUp on Redis', () => {
  const redis = redisPerSuite();
  it('two receivers starting on one Redis inbox recover the outage once between them, and raise the mark', async () => {
    await twoReceiversStart(() => redisInbox({ url: redis.server.url, prefix: 'catch-up', pollMs: 10 }), closing);
  }, 30_000);

  it('a run that failed in a receiver that then stopped: another one, hearing deliveries, takes up its window', async () => {
    await failedRunTakenUp(() => redisInbox({ url: redis.server.url, prefix: 'catch-up-failed', pollMs: 10 }), closing);
  }, 30_000);
});

describe('catchUp on PostgreSQL', () => {
  const postgres = postgresDatabase();
  it('two receivers starting on one PostgreSQL inbox recover the outage once between them, and raise the mark', async () => {
    await twoReceiversStart(() => postgresInbox({ connectionString: postgres.url, schema: 'catch_up', pollMs: 10 }), closing);
  }, 30_000);

  it('a run that failed in a receiver that then stopped: another one, hearing deliveries, takes up its window', async () => {
    await failedRunTakenUp(() => postgresInbox({ connectionString: postgres.url, schema: 'catch_up_failed', pollMs: 10 }), closing);
  }, 30_000);
});
