/**
 * PostgreSQL going away under a worker (its own cluster, stopped with a fast shutdown and started again): one
 * warning, one "answers again", `health()` failing meanwhile (test/inbox/store-outage.ts). Each of the
 * worker's loops used to log "Could not claim an event…; trying again." every second for the outage's length.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { runOutage } from './store-outage.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe('a worker on PostgreSQL that goes away and comes back', () => {
  it('warns once, says once that it is back, and is failing meanwhile', async () => {
    const inbox = postgresInbox({ connectionString: server.url });
    try {
      await runOutage({ inbox, downMs: 2500, breakStore: () => server.stopFast(), restoreStore: () => server.start() });
    } finally {
      await inbox.close();
    }
  }, 40_000);
});
