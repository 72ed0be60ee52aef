// Mutation testing (not part of CI: a whole profile takes tens of minutes). The one Stryker config; what a run
// mutates and which suites judge it is the profile's (profiles.mjs), chosen by name:
//   nice -n 10 npm run mutate -- <profile> --ignoreStatic --concurrency 1 --mutate <one file>
// Stryker runs from the repository's root, so every path here is the root's. It lives in tools/mutation/ (not a
// root dev dependency); `npm run mutate` installs it first. Results and the reading of survivors: results.md
// beside this file; the survivors accepted as they are: accepted-survivors.md (`node tools/mutation/survivors.mjs`
// lists the others).
import { chosenProfile } from './profiles.mjs';

const profile = chosenProfile();
const ignorePatterns = ['dist', 'coverage', 'docs/api', 'bench/results', '.data', 'reports', 'test/consumers', 'test/runtimes', 'test/crash', 'tools/*', '!tools/mutation', 'tools/mutation/reports', '.stryker-tmp*'];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'tools/mutation/vitest.config.ts' },
  // perTest: each mutant runs only the tests that reach it, which is what makes a run finish at all.
  coverageAnalysis: 'perTest',
  mutate: profile.mutate,
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
  // The sandbox holds this folder (its vitest config and profiles) but not the other tools'. Two runs at once
  // (`--tempDirName .stryker-tmp-2`) must not copy each other's sandbox.
  ignorePatterns: profile.dist ? ignorePatterns.filter((pattern) => pattern !== 'dist') : ignorePatterns,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'tools/mutation/reports/mutation.html' },
  jsonReporter: { fileName: 'tools/mutation/reports/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
