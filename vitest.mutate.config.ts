// The suites that exercise the receiver core and the adapters; what `npm run mutate` (Stryker) runs against
// each mutant. Narrower than vitest.config.ts: CLI, runtimes, consumers and browser suites never reach the
// mutated files and would only slow every mutant down. (Not mergeConfig: it would concatenate `include`.)
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/receive/**/*.test.ts', 'test/adapters/**/*.test.ts', 'test/events/**/*.test.ts'],
  },
});
