/**
 * The REST clients guide's examples (docs/rest-clients.md) stay true to the code: each block parses, imports only names
 * the built `chat-webhooks/api` exports, and the form builder block runs as written.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { form } from '../../src/api/index.js';

const root = new URL('../../', import.meta.url);
const guide = readFileSync(new URL('docs/rest-clients.md', root), 'utf8');
const blocks = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** Runs (or only checks) a block as an ES module inside the package, so `chat-webhooks/*` resolves by name. */
function runBlock(code: string, check: boolean): string {
  const file = new URL(`readme-block-${process.pid}.mjs`, root);
  writeFileSync(file, code);
  try {
    return execFileSync(process.execPath, [...(check ? ['--check'] : []), file.pathname], { cwd: root, encoding: 'utf8' });
  } finally {
    rmSync(file);
  }
}

describe('docs/rest-clients.md: calling the platform', () => {
  beforeAll(() => {
    if (!existsSync(new URL('dist/src/api/index.js', root))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it('has its examples', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
  });

  it('imports only names chat-webhooks/api exports, and every block parses', async () => {
    const api = await import(new URL('dist/src/api/index.js', root).href);
    for (const block of blocks) {
      for (const [, names] of block.matchAll(/import \{([^}]*)\} from 'chat-webhooks\/api'/g)) {
        for (const name of names!.split(',').map((item) => item.trim()).filter(Boolean)) expect(api).toHaveProperty(name);
      }
      runBlock(block, true);
    }
  });

  it('runs the form builder example, and its documented error is the real one', () => {
    const block = blocks.find((code) => code.includes('form.fields('))!;
    const documented = /\/\/ throws ValidationError: (.*)$/m.exec(block)![1];
    const runnable = block.replace(/^.*\/\/ throws.*$/m, 'console.log(JSON.stringify(formFields.map((field) => field.elementId)));');
    expect(JSON.parse(runBlock(runnable, false))).toEqual(['intro', 'name', 'topic', 'consent', 'when', 'faq', 'send']);
    expect(() => form.urlNavigation('example.com/faq')).toThrow(documented);
  });
});
