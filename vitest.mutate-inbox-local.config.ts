// The suites that exercise the in-process inboxes (memory, SQLite and the helpers beside them) without the
// Redis and PostgreSQL stores: what stryker.inbox-local.config.mjs runs against each mutant. The contract's
// Redis runs, the CLI's (a child process running dist/, which a mutant never reaches and Stryker's sandbox
// does not hold), the 100 000-dead-entries runs (minutes, no line of their own) and the 128 MB continuous-writes
// test of the checkpointer (15 s; its RESTART is also reached by the catch-up test's `maxCatchUps: 0`) are left
// out by name.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/inbox/inboxes.test.ts',
      'test/inbox/delivery.test.ts',
      'test/inbox/stored-event.test.ts',
      'test/inbox/write-batch.test.ts',
      'test/inbox/turn-batch.test.ts',
      'test/inbox/file-sync.test.ts',
      'test/inbox/memory.test.ts',
      'test/inbox/port.test.ts',
      'test/inbox/stored-body.test.ts',
      'test/inbox/sqlite*.test.ts',
      'test/receive/consume.test.ts',
    ],
    testNamePattern: /^(?!.*(redis|CLI|dead entries|past 32 MB)).*$/i,
    // No PostgreSQL suite here.
    globalSetup: [],
  },
});
