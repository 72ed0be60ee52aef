/**
 * The README's 30-second start is what a TypeScript user pastes first: it must compile under `strict`
 * against the built package's declarations, resolved by package name as in the user's project.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The first ```ts block after a heading. */
function codeBlockAfter(heading: string): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`no ts block after ${heading}`);
  return block;
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/src/index.d.ts'))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
}, 120_000);

describe('README', () => {
  it('the 30-second start typechecks under strict', () => {
    const code = codeBlockAfter('## 30-second start');
    expect(code).toContain("from 'chat-webhooks'");
    expectToTypecheck(code);
  });

  it('the Observability example typechecks under strict, with the OpenTelemetry SDK', () => {
    const code = codeBlockAfter('## Observability');
    expect(code).toContain("from 'chat-webhooks/otel'");
    expectToTypecheck(code);
  });
});

/** Compiles `code` as a user's ES module resolving this package by name. */
function expectToTypecheck(code: string): void {
  // Inside the repository, so that 'chat-webhooks' resolves to this package by name (self-reference).
  const folder = mkdtempSync(join(root, '.readme-check-'));
  try {
    // .mts: an ES module without a package.json of its own, which would hide this package's name.
    writeFileSync(join(folder, 'server.mts'), code);
    const compilerOptions = { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', types: ['node'], noEmit: true, typeRoots: [join(root, 'node_modules/@types')] };
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['server.mts'] }));
    const tsc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', folder], { encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
