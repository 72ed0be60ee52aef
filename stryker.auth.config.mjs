// Mutation testing of Basic auth (src/receive/auth.ts) against the suites that judge it
// (vitest.mutate-auth.config.ts), instead of every receive and adapter suite; stricter, not looser: a mutant
// only some other suite would kill counts as a survivor here.
//   nice -n 19 npm run mutate -- stryker.auth.config.mjs --ignoreStatic --concurrency 1
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-auth.config.ts' },
  mutate: ['src/receive/auth.ts'],
};
