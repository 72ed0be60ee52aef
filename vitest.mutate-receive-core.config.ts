// The suites that judge the receive path's core (admission, intake, dispatch), for
// `stryker.receive-core.config.mjs`: test/receive and test/telemetry (the traced path), without the validator's,
// the dedupe window's and the worker's own suites, and without test/adapters. Every request reaches these files,
// so with the full mutate config each of their mutants ran nearly every receive and adapter suite (~15 s a mutant
// on the shared machine). Stricter, not looser: a mutant only an adapter suite kills counts as a survivor here.
import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/receive/**/*.test.ts', 'test/telemetry/**/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      'test/receive/compile.test.ts',
      'test/receive/explain.test.ts',
      'test/receive/envelope.test.ts',
      'test/receive/dedupe.test.ts',
      'test/receive/dedupe-collisions.test.ts',
      'test/receive/consume.test.ts',
      'test/receive/logger.test.ts',
      'test/receive/basic-credentials.test.ts',
      'test/receive/auth-timing.test.ts',
      'test/receive/auth-key.test.ts',
    ],
  },
});
