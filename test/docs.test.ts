/**
 * The design document the code cites is in the repository: every citation names docs/design.md, which
 * exists, and no file cites the upper-case design file of the shared folder, which the repository lacks.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
// Spelled in two parts so that this file does not cite it.
const sharedName = new RegExp(`\\b${'DESIGN'}\\.md\\b`);
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

describe('design document', () => {
  it('is docs/design.md, and nothing cites a design file outside the repository', () => {
    expect(existsSync(new URL('docs/design.md', root))).toBe(true);
    const citing = tracked.filter(
      (file) => existsSync(new URL(file, root)) && !/\.(png|svg|json)$/.test(file) && sharedName.test(readFileSync(new URL(file, root), 'utf8')),
    );
    expect(citing).toEqual([]);
  });

  it('lists every subpath that package.json exports in its public surface table', () => {
    const design = readFileSync(new URL('docs/design.md', root), 'utf8');
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
    for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
      expect(design).toContain(`| \`${subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`}\` |`);
    }
  });
});
