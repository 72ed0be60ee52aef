// Mutation testing of the receive path's core against test/receive's request suites
// (vitest.mutate-receive-core.config.ts), one file at a time:
//   nice -n 19 npm run mutate -- stryker.receive-core.config.mjs --ignoreStatic --concurrency 1 --mutate src/receive/intake.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-receive-core.config.ts' },
  mutate: ['src/receive/admission.ts', 'src/receive/intake.ts', 'src/receive/dispatch.ts'],
};
