// The suites that exercise the durable inboxes (src/inbox) in this process: what a Stryker run over src/inbox
// runs against each mutant (stryker.inbox.config.mjs). They start their own redis-server on a free port.
// outage.test.ts is left out: it measures memory in child processes, which mutants do not reach.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/inbox/**/*.test.ts', 'test/receive/consume.test.ts'],
    exclude: ['test/inbox/outage.test.ts'],
  },
});
