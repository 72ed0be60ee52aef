// Mutation testing of the CLI's own logic (issue 23, item 11): stryker.config.mjs with src/cli's files and the
// CLI suites that run it in-process. One file at a time, on the shared machine:
//   nice -n 19 npm run mutate -- stryker.cli.config.mjs --ignoreStatic --concurrency 1 --mutate src/cli/captured.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-cli.config.ts' },
  mutate: ['src/cli/**/*.ts', '!**/*.test.ts', '!**/*.d.ts'],
};
