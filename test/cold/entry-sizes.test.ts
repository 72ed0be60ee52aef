/**
 * Tree-shaking proven (issue 37, item 4): every public entry, bundled as a user's bundler would (esbuild,
 * minified, ESM, peers external), stays within 5 % of its size recorded in bench/results/entry-sizes.json, so
 * a heavy import (zod on the receive path, commander outside the CLI) cannot slip back in unnoticed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bench, without declarations.
import { entrySizes } from '../../bench/lib/entry-sizes.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const recorded = JSON.parse(readFileSync(`${root}bench/results/entry-sizes.json`, 'utf8')).sizes as Record<string, number>;

describe('public entries, bundled', () => {
  let sizes: Record<string, number>;
  beforeAll(async () => {
    // CI builds before testing; a local run on a fresh clone builds here.
    if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
    sizes = (await entrySizes()) as Record<string, number>;
  }, 120_000);

  it('every entry has a recorded size, and every recorded size an entry', () => {
    expect(Object.keys(sizes).sort()).toEqual(Object.keys(recorded).sort());
  });

  it('no entry grew more than 5 % past its recorded size (node bench/entry-sizes.mjs records them)', () => {
    const grown = Object.entries(sizes).filter(([name, size]) => size > (recorded[name] ?? 0) * 1.05);
    expect(grown.map(([name, size]) => `${name}: ${size} B gzipped, recorded ${recorded[name]}`)).toEqual([]);
  });

  it('the receiving entries hold no zod and no commander', async () => {
    expect(sizes['chat-webhooks']).toBeLessThan(30 * 1024);
    expect(sizes['chat-webhooks/lambda']).toBeLessThan(30 * 1024);
    expect(sizes['chat-webhooks/fetch']).toBeLessThan(30 * 1024);
  });
});
