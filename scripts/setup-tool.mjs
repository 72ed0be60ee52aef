// `npm run setup:<tool>`: installs one of tools/<tool>/ (the heavy tools a single step needs: other runtimes,
// the browser driver, Stryker, the package linters), which the root's `npm install` leaves out to keep a
// clone's install small. `npm ci` from the folder's own lock, skipped when node_modules already matches it.
// Packages there still find the root's (vitest, for Stryker's runner) by walking up to its node_modules.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const tools = fileURLToPath(new URL('../tools/', import.meta.url));
const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/setup-tool.mjs <tool>... (a folder of tools/)');
  process.exit(2);
}

/** Every package of the lock is installed at its locked version (npm keeps the installed tree's lock here). */
function upToDate(folder) {
  const installed = `${folder}node_modules/.package-lock.json`;
  if (!existsSync(installed)) return false;
  const wanted = JSON.parse(readFileSync(`${folder}package-lock.json`, 'utf8')).packages;
  const have = JSON.parse(readFileSync(installed, 'utf8')).packages;
  return Object.entries(wanted).every(([path, entry]) => path === '' || entry.optional || have[path]?.version === entry.version);
}

for (const name of names) {
  const folder = `${tools}${name}/`;
  if (!existsSync(`${folder}package.json`)) {
    console.error(`no tool folder tools/${name}/`);
    process.exit(2);
  }
  if (upToDate(folder)) continue;
  console.error(`installing tools/${name}/ (npm ci)`);
  // legacy-peer-deps (also in the folder's .npmrc): peers such as vitest are the root's, never a second copy.
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error', '--legacy-peer-deps'], { cwd: folder, stdio: 'inherit' });
}
