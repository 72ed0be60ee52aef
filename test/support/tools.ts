/**
 * The heavy tools a few suites need live in tools/<name>/ (installed by `npm run setup:<name>`, which .ci/run
 * runs), not in the root's node_modules. A suite asks for its tool here: when it is missing, CI (process.env.CI)
 * gets a failing test that says so, and a local run a skipped one whose name gives the command to install it,
 * so a missing tool never passes silently.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { it } from 'vitest';

export type Tool = 'runtimes' | 'browser' | 'packaging' | 'mutation';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A path inside tools/<tool>/node_modules, e.g. toolPath('runtimes', '.bin', 'bun'). */
export function toolPath(tool: Tool, ...parts: string[]): string {
  return [`${root}tools/${tool}/node_modules`, ...parts].join('/');
}

/** The sentence a skipped or failing test carries. */
export function missingToolMessage(tool: Tool, what: string): string {
  return `${what}: not installed (tools/${tool}/): run \`npm run setup:${tool}\``;
}

/**
 * True when every path exists. Otherwise registers, in the calling describe block, a test that fails in CI
 * and is skipped elsewhere, both named with the setup command, and returns false (for describe.skipIf).
 */
export function requireTool(tool: Tool, what: string, paths: string[]): boolean {
  if (paths.every((path) => existsSync(path))) return true;
  const message = missingToolMessage(tool, what);
  if (process.env.CI) {
    it(`needs ${what}`, () => {
      throw new Error(message);
    });
  } else {
    console.warn(`skipped: ${message}`);
    it.skip(`skipped: ${message}`, () => {});
  }
  return false;
}

/**
 * Imports a package installed in tools/<tool>/ (resolved as require() would from there, so a CommonJS
 * package's module.exports), or undefined when it is not installed.
 */
export async function importTool<T>(tool: Tool, name: string): Promise<T | undefined> {
  const resolve = createRequire(`${root}tools/${tool}/package.json`).resolve;
  let file: string;
  try {
    file = resolve(name);
  } catch {
    return undefined;
  }
  const module = (await import(pathToFileURL(file).href)) as { default?: T };
  return module.default ?? (module as T);
}
