/**
 * The built package copied into a temporary folder whose only module is zod (its one dependency), so that no
 * optional peer resolves from it: for tests of what an entry does without its peer, faster than the packed
 * package of test/consumers/run.mjs. `run(source)` runs an ES module placed in the folder (the package imports
 * itself by name there) and parses the one line of JSON it prints.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

export function peerlessPackage(): { run(name: string, source: string): unknown } {
  const folder = mkdtempSync(join(tmpdir(), 'peerless-'));
  beforeAll(() => {
    if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
    cpSync(join(root, 'dist'), join(folder, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(folder, 'package.json'));
    mkdirSync(join(folder, 'node_modules'));
    symlinkSync(join(root, 'node_modules', 'zod'), join(folder, 'node_modules', 'zod'));
  }, 120_000);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  return {
    run(name, source) {
      writeFileSync(join(folder, name), source);
      return JSON.parse(execFileSync(process.execPath, [name], { cwd: folder, encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } }));
    },
  };
}
