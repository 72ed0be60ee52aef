// Mutation testing of the inboxes on servers (issue 23, item 11): src/inbox/redis.ts, postgres.ts,
// postgres-listener.ts and postgres-schema.ts against the suites that start a real redis-server or PostgreSQL
// (vitest.mutate-inbox-servers.config.ts), and nothing else. One file at a time, on the shared machine:
//   nice -n 19 npm run mutate -- stryker.inbox-servers.config.mjs --ignoreStatic --concurrency 1 --mutate src/inbox/postgres-schema.ts
// The contract's CLI tests run the built CLI (dist/, unmutated) against the store: `npm run build` first; the
// sandbox keeps dist/ for them.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-inbox-servers.config.ts' },
  ignorePatterns: base.ignorePatterns.filter((pattern) => pattern !== 'dist'),
  mutate: ['src/inbox/redis.ts', 'src/inbox/postgres.ts', 'src/inbox/postgres-listener.ts', 'src/inbox/postgres-schema.ts'],
};
