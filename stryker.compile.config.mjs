// Mutation testing of the compiled validator (src/receive/compile) against the suites that judge it
// (vitest.mutate-compile.config.ts), instead of every receive and adapter suite. One file at a time:
//   npm run mutate -- stryker.compile.config.mjs --mutate src/receive/compile/tree.ts
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-compile.config.ts' },
  mutate: ['src/receive/compile/*.ts'],
};
