// The CLI suites that run src/cli in this process (stryker.cli.config.mjs). The other test/cli suites run the
// built CLI (dist/) as a child process: mutants of src/ never reach them, so they would only lengthen every
// run. A file of src/cli that only those suites exercise shows as "no coverage" here until an in-process test
// reaches it.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/cli/listen.test.ts', 'test/cli/listen-units.test.ts', 'test/cli/units.test.ts', 'test/cli/captured.test.ts', 'test/cli/send.test.ts'],
  },
});
