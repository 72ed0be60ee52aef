// The suites that judge the compiled validator (src/receive/compile): its agreement with zod, property-based
// and edge by edge, and explain's walk over it. For `stryker.compile.config.mjs`: with the full mutate
// config every compiler mutant also ran each receive and adapter suite that parses an event (~10 s each).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/receive/compile.test.ts', 'test/receive/explain.test.ts', 'test/receive/envelope.test.ts', 'test/receive/parse.test.ts'],
  },
});
