// `npm run mutate -- <profile> [stryker flags]`: runs Stryker with tools/mutation/stryker.config.mjs and the
// profile of that name (profiles.mjs), passing the flags on (`--mutate <file>`, `--concurrency 1`, …).
// `npm run mutate` has installed Stryker into tools/mutation/ before this runs.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { profiles } from './profiles.mjs';

const [name, ...flags] = process.argv.slice(2);
if (name === undefined || !Object.hasOwn(profiles, name)) {
  console.error(`${name === undefined ? 'usage' : `no profile "${name}"`}: npm run mutate -- <profile> [stryker flags]`);
  for (const [each, { about }] of Object.entries(profiles)) console.error(`  ${each.padEnd(20)} ${about}`);
  process.exit(2);
}
const stryker = fileURLToPath(new URL('node_modules/.bin/stryker', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const run = spawnSync(stryker, ['run', 'tools/mutation/stryker.config.mjs', ...flags], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, MUTATE_PROFILE: name },
});
if (run.error) throw run.error;
process.exit(run.status ?? 1);
