// Mutation testing of the durable inboxes (issue 23, item 11): stryker.config.mjs with src/inbox's files and
// the inbox suites. One file at a time, on the shared machine (not yet run: see bench/results/mutation.md):
//   nice -n 19 npm run mutate -- stryker.inbox.config.mjs --ignoreStatic --concurrency 1 --mutate src/inbox/memory.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-inbox.config.ts' },
  mutate: ['src/inbox/**/*.ts', '!**/*.test.ts', '!**/*.d.ts'],
};
