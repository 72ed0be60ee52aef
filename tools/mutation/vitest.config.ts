// The vitest config of every mutation run (tools/mutation/stryker.config.mjs): the root's, with the chosen
// profile's suites (profiles.mjs) instead of every suite. (Not mergeConfig: it would concatenate `include`.)
// MUTATE_TESTS (a comma-separated list of test files) narrows the run to the suites of one source file: that is
// what lets a run measure module-level schemas (zod objects built at load) without --ignoreStatic, as each
// static mutant reruns every test the profile names.
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';
import { chosenProfile } from './profiles.mjs';

const profile = chosenProfile();
const only = process.env.MUTATE_TESTS?.split(',').map((file) => file.trim()).filter(Boolean);
const { exclude = [], ...options } = profile.vitest ?? {};

export default defineConfig({
  ...base,
  // The repository (or Stryker's sandbox of it), not this folder: the suites' and setups' paths are the root's.
  root: fileURLToPath(new URL('../../', import.meta.url)),
  test: {
    ...base.test,
    ...options,
    include: only?.length ? only : profile.tests,
    exclude: [...configDefaults.exclude, ...exclude],
  },
});
