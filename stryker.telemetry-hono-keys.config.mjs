// Mutation testing of the OpenTelemetry hooks, the Hono adapter and the idempotency keys (issue 33, item 9,
// part two) against their own suites (vitest.mutate-telemetry-hono-keys.config.ts), one file at a time:
//   nice -n 10 npm run mutate -- stryker.telemetry-hono-keys.config.mjs --ignoreStatic --concurrency 1 --mutate src/telemetry/otel.ts
// Results and the reading of survivors: bench/results/mutation.md, "Eighth pass (issue 33 item 9), part two".
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-telemetry-hono-keys.config.ts' },
  // test/telemetry/inboxes.test.ts runs a worker from the built package in another process: the sandbox gets
  // dist/ (`npm run build` first), built from the unmutated sources; nothing mutated is judged by it alone.
  // Two runs at once (`--tempDirName .stryker-tmp-2`) must not copy each other's sandbox.
  ignorePatterns: [...base.ignorePatterns.filter((pattern) => pattern !== 'dist'), '.stryker-tmp*'],
  mutate: ['src/telemetry/otel.ts', 'src/telemetry/index.ts', 'adapters/hono/*.ts', 'src/events/idempotency.ts', 'src/receive/idempotency.ts'],
};
