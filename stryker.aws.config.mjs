// Mutation testing of the AWS adapter (issue 33, item 9) against its own suites (vitest.mutate-aws.config.ts):
//   nice -n 10 npm run mutate -- stryker.aws.config.mjs --ignoreStatic --concurrency 1 --mutate adapters/aws/idempotency.ts
// Results and the reading of survivors: bench/results/mutation.md, "Eighth pass".
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-aws.config.ts' },
  mutate: ['adapters/aws/*.ts'],
};
