/**
 * reconcile (issue 35) on the inboxes of a server, Redis and PostgreSQL (the others: reconcile.test.ts), against the local platform of test/support/chat-platform.ts: the outage of the issue's
 * "Checked by" through a receiver on the in-memory window and on each inbox. Each recovers exactly the missed
 * events, handles every event once, runs nothing outside the window, waits out a 429, and recovers 0 when run
 * again.
 */
import { afterEach, describe, it } from 'vitest';
import { createWebhooks, type Inbox, type Webhooks } from '../../src/index.js';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { postgresDatabase } from '../support/postgres-server.js';
import { redisPerSuite } from '../support/redis-server.js';
import { auth, expectTruth, outage, recordHandled } from './scenario.js';

const open: Webhooks[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((webhooks) => webhooks.close()));
});

function receiver(inbox?: Inbox) {
  const webhooks = createWebhooks({ auth, logger: {}, ...(inbox ? { inbox } : {}) });
  open.push(webhooks);
  return { webhooks, handled: recordHandled(webhooks) };
}

describe('reconcile after an outage', () => {
  const redis = redisPerSuite();
  it('on redisInbox', async () => {
    const { webhooks, handled } = receiver(redisInbox({ url: redis.server.url, prefix: 'reconcile', pollMs: 10 }));
    expectTruth(await outage(webhooks, handled));
  }, 30_000);

  const postgres = postgresDatabase();
  it('on postgresInbox', async () => {
    const { webhooks, handled } = receiver(postgresInbox({ connectionString: postgres.url, pollMs: 10 }));
    expectTruth(await outage(webhooks, handled));
  }, 30_000);
});
