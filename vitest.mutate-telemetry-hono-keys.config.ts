// The suites that judge the OpenTelemetry hooks, the Hono adapter and the idempotency keys, for
// `stryker.telemetry-hono-keys.config.mjs`: test/telemetry (every adapter and inbox traced), the Hono adapter's
// (test/adapters/hono*.test.ts) and the keys' own (test/events, the receiver's app keys). The keys reach nearly
// every receive suite; leaving those out is stricter, not looser: a mutant only another suite kills counts as a
// survivor here. MUTATE_TESTS (comma-separated test files) narrows it further, as in vitest.mutate-api.config.ts:
// each file's runs in bench/results/mutation.md name theirs (test/telemetry/cardinality.test.ts, 1 000 requests
// through every adapter, takes over a minute per mutant on the shared machine).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

const only = process.env.MUTATE_TESTS?.split(',').map((file) => file.trim()).filter(Boolean);
const suites = ['test/telemetry/*.test.ts', 'test/adapters/hono*.test.ts', 'test/events/*.test.ts', 'test/receive/app-keys.test.ts'];

export default defineConfig({
  ...base,
  test: { ...base.test, include: only?.length ? only : suites },
});
