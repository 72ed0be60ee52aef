// The suites that run the Redis and PostgreSQL inboxes in this process: what a Stryker run over them runs
// against each mutant (stryker.inbox-servers.config.mjs). They start their own redis-server on a free port;
// the PostgreSQL ones use the run's throw-away cluster (vitest.config.ts's global setup). The CLI's suites run
// the CLI as a child process, which mutants do not reach; outage.test.ts measures memory in child processes.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // The admin test's dead entries: 2 500 cross the batches of 1 000 (100 000 take minutes a mutant).
    env: { INBOX_DEAD_ENTRIES: '2500' },
    include: [
      'test/inbox/postgres*.test.ts',
      'test/inbox/redis*.test.ts',
      'test/inbox/inboxes.test.ts',
      'test/inbox/delivery.test.ts',
      'test/inbox/stored-event.test.ts',
    ],
  },
});
