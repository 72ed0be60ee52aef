// Mutation testing of the receiver core and the adapters (issue 10, deliverable 7).
// Not part of CI: a full run takes tens of minutes. Run one file with
//   npm run mutate -- --mutate src/receive/auth.ts
// Stryker lives in tools/mutation/ (not a root dev dependency); `npm run mutate` installs it first.
// Results and the reading of survivors: bench/results/mutation.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  // perTest: each mutant runs only the tests that reach it, which is what makes a run finish at all.
  coverageAnalysis: 'perTest',
  mutate: [
    'src/receive/**/*.ts',
    'src/events/**/*.ts',
    'adapters/**/*.ts',
    '!**/*.test.ts',
    '!**/*.d.ts',
    // Generated sources are checked by regenerating them (test/generated.test.ts), not by mutation.
    '!**/generated/**',
  ],
  // No TypeScript checker: @stryker-mutator/typescript-checker imports the bare name `typescript`, which here
  // is TypeScript 7 (native, no JS API); it cannot be pointed at a `typescript@5` alias. Mutants that do not
  // type-check therefore run (and are usually killed) instead of being reported as compile errors.
  checkers: [],
  // Stryker's sandbox also rewrites tsconfig.json's out-of-tree `extends`/`references` through the
  // `typescript` JS API (absent in TS 7). Ours has none, so point it at a file that does not exist: nothing
  // to rewrite, and no call into TS 7.
  tsconfigFile: 'tsconfig.stryker-sandbox-untouched.json',
  // The machine is shared; two workers keep a run from starving everything else.
  concurrency: 2,
  // Timing tests (deadlines, handler timeouts) run slower under instrumentation.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  ignorePatterns: ['dist', 'coverage', 'docs/api', 'bench/results', '.data', 'reports', 'test/consumers', 'test/runtimes', 'test/crash', 'tools'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
