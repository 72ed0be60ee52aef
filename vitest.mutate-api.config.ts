// The suites that exercise the REST clients (src/api): what a Stryker run over src/api runs against each
// mutant (stryker.api.config.mjs). Kept apart from vitest.mutate.config.ts so a run over one client file does
// not start the receive and adapter suites in its dry run.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/api/**/*.test.ts'],
  },
});
