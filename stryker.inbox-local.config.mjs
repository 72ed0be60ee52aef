// Mutation testing of the in-process inboxes (issue 23, item 11): src/inbox's files but redis.ts and
// postgres*.ts, against vitest.mutate-inbox-local.config.ts (no Redis or PostgreSQL suite, no dist/). One file
// at a time, on the shared machine (results: bench/results/mutation.md, "Sixth pass"):
//   nice -n 19 npm run mutate -- stryker.inbox-local.config.mjs --ignoreStatic --concurrency 1 --mutate src/inbox/memory.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-inbox-local.config.ts' },
  mutate: ['src/inbox/**/*.ts', '!src/inbox/redis.ts', '!src/inbox/postgres*.ts', '!**/*.test.ts', '!**/*.d.ts'],
};
