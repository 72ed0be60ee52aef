/**
 * The CLI loads a subcommand only when it runs (issue 37): `--version` and `--help` load none of them (nor
 * zod), a command loads its own file and not the others', and `--help` still lists every command as it did.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'cli-lazy-'));
const commands = ['send', 'listen', 'validate', 'triggers', 'replay', 'inbox'];

/** Runs the built CLI; its output and the modules it loaded (commands by name, zod as 'zod'). */
function cli(args: string[], name: string): { output: string; loaded: string[] } {
  const log = join(scratch, `${name}.log`);
  const hook = fileURLToPath(new URL('./load-log.mjs', import.meta.url));
  const output = execFileSync(process.execPath, ['--import', hook, `${root}dist/src/cli/index.js`, ...args], {
    env: { ...process.env, LOAD_LOG: log, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  const urls = existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
  const loaded = new Set<string>();
  for (const url of urls) {
    const command = /\/dist\/src\/cli\/(\w+)\.js$/.exec(url)?.[1];
    if (command && commands.includes(command)) loaded.add(command);
    if (url.includes('/node_modules/zod/')) loaded.add('zod');
  }
  return { output, loaded: [...loaded].sort() };
}

describe('the CLI loads subcommands lazily', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/src/cli/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('--version and --help load no subcommand', () => {
    expect(cli(['--version'], 'version')).toEqual({ output: expect.stringMatching(/^\d+\.\d+\.\d+/), loaded: [] });
    const help = cli(['--help'], 'help');
    expect(help.loaded).toEqual([]);
    for (const term of ['send [options] [trigger]', 'listen [options]', 'validate [options] <file|->', 'triggers [options]', 'replay [options] <file.ndjson>', 'inbox ', 'help [command]']) {
      expect(help.output).toContain(`  ${term}`);
    }
  });

  it('a command loads its own file only, and runs as before', () => {
    const { output, loaded } = cli(['triggers', '--json'], 'triggers');
    expect(loaded).toEqual(['triggers', 'zod']);
    expect(output.trim().split('\n').length).toBeGreaterThan(40);
    expect(cli(['help', 'send'], 'help-send').loaded.filter((name) => name !== 'zod')).toEqual(['send']);
  });
});
