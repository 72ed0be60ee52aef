// Mutation testing of the Lambda adapter against its own suites (vitest.mutate-lambda.config.ts):
//   nice -n 19 npm run mutate -- stryker.lambda.config.mjs --ignoreStatic --concurrency 1 --mutate adapters/lambda/translate.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-lambda.config.ts' },
  mutate: ['adapters/lambda/*.ts'],
};
