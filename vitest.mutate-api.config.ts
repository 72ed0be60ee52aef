// The suites that exercise the REST clients (src/api): what a Stryker run over src/api runs against each
// mutant (stryker.api.config.mjs). Kept apart from vitest.mutate.config.ts so a run over one client file does
// not start the receive and adapter suites in its dry run.
//
// MUTATE_TESTS (a comma-separated list of test files) narrows the run to the suites of one source file. That
// is what lets a run measure the module-level schemas (zod objects built at load): run without
// --ignoreStatic, each such "static" mutant reloads the modules and runs every test, which over all of
// test/api costs some 20 s a mutant, over one suite about a second.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

const only = process.env.MUTATE_TESTS?.split(',').map((file) => file.trim()).filter(Boolean);

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: only?.length ? only : ['test/api/**/*.test.ts'],
  },
});
