// Mutation testing of the REST clients (issue 23, item 11): stryker.config.mjs with src/api's files and
// test/api's suites. One file at a time, on the shared machine:
//   nice -n 19 npm run mutate -- stryker.api.config.mjs --ignoreStatic --concurrency 1 --mutate src/api/redirects.ts
// A file whose zod schemas are built at load (form.ts, message.ts, …): its own suites only, static mutants counted
// (vitest.mutate-api.config.ts; bench/results/mutation.md, "Sixth pass"):
//   MUTATE_TESTS=test/api/form.test.ts,test/api/modules-load.test.ts \
//     nice -n 19 npm run mutate -- stryker.api.config.mjs --concurrency 1 --mutate src/api/form.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-api.config.ts' },
  mutate: ['src/api/**/*.ts', '!**/*.test.ts', '!**/*.d.ts'],
};
