/**
 * The design document the code cites is in the repository: every citation names docs/design.md, which
 * exists, and no file cites the upper-case design file of the shared folder, which the repository lacks.
 * The README and the guides of docs/ link only to files and headings that exist, and the README links every guide.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anchor } from '../scripts/readme-toc.mjs';

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

describe('docs/design.md: the contract and the tree as it is', () => {
  const design = readFileSync(new URL('docs/design.md', root), 'utf8');
  const layout = design.slice(design.indexOf('## Layout'), design.indexOf('Generated files say so'));

  it('its Layout names every folder of src/ and adapters/ there is, and nothing as not built yet', () => {
    const folders = (parent: string) =>
      readdirSync(new URL(`${parent}/`, root), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`);
    expect(folders('src').filter((folder) => !layout.includes(`  ${folder} `))).toEqual([]);
    expect(folders('adapters').filter((folder) => !layout.includes(folder))).toEqual([]);
    expect(design).not.toMatch(/not built yet/);
  });

  it('quotes no measurement: figures are in bench/results/, which it links', () => {
    // A ratio of runs (0.70×) or a rate (760 handled/s) is a measurement.
    expect(design.match(/\d×|\d+ handled\/s|\d k simulated cycles/g) ?? []).toEqual([]);
    for (const [, target] of design.matchAll(/\]\(\.\.\/(bench\/results\/[^)]*)\)/g)) expect(existsSync(new URL(target!, root)), target).toBe(true);
    expect(design).toContain('(../bench/results/design-figures.md)');
  });
});

describe('SECURITY.md, CHANGELOG.md, packing', () => {
  const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

  it('SECURITY.md names a private reporting channel and cites only files that exist', () => {
    const security = read('SECURITY.md');
    expect(security).toContain('https://github.com/chat-webhooks/chat-webhooks/security/advisories/new');
    const cited = [...security.matchAll(/`((?:src|test|adapters|docs|bench|scripts|examples)\/[^`\s]*)`/g)].map((match) => match[1] as string);
    expect(cited.length).toBeGreaterThan(3);
    expect(cited.filter((path) => !existsSync(new URL(path, root)))).toEqual([]);
  });

  it('CHANGELOG.md has one unreleased section, and it lists every command of the CLI', () => {
    const changelog = read('CHANGELOG.md');
    const sections = changelog.split('\n').filter((line) => line.startsWith('## '));
    expect(sections).toEqual(['## [Unreleased]']);
    for (const command of ['send', 'listen', 'validate', 'triggers', 'replay', 'inbox']) expect(changelog).toContain(`\`${command}\``);
  });

  it('every runtime dependency is imported by the package, and README and docs/design.md name exactly those', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const names = Object.keys(pkg.dependencies).sort();
    const shipped = tracked.filter((file) => /^(src|adapters)\/.*\.ts$/.test(file) && !file.endsWith('.test.ts') && existsSync(new URL(file, root)));
    const sources = shipped.map((file) => read(file)).join('\n');
    const imported = (name: string) => new RegExp(`(from|import\\(|require\\()\\s*'${name.replace(/[/.]/g, '\\$&')}(/[^']*)?'`).test(sources);
    expect(names.filter((name) => !imported(name))).toEqual([]);
    // Both documents say it in one sentence of backquoted names.
    const named = (text: string, sentence: RegExp) => [...(text.match(sentence)?.[0] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]).sort();
    expect(named(read('README.md'), /Runtime dependencies:[^.]*\./)).toEqual(names);
    expect(named(read('docs/design.md'), /runtime needs only[^.]*\./)).toEqual(names);
  });

  it('npm pack builds first, so a tarball never holds a stale dist/', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepack).toMatch(/scripts\/build\.mjs|npm run build/);
  });
});

describe('the README and the guides of docs/', () => {
  const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
  const guides = readdirSync(new URL('docs/', root)).filter((entry) => entry.endsWith('.md')).sort().map((entry) => `docs/${entry}`);
  const documents = ['README.md', ...guides];
  /** The text outside fenced code blocks and inline code, where a link is a link. */
  const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```\s*$/gm, '').replace(/`[^`\n]*`/g, '');
  /** GitHub's anchors of every heading of a Markdown text. */
  const anchors = (markdown: string) => {
    const seen = new Map<string, number>();
    return new Set([...prose(markdown).matchAll(/^#{1,6} (.+?)\s*$/gm)].map((match) => anchor(match[1]!, seen)));
  };

  it('the README is short enough to read to the end, and links every guide', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
    expect(guides.filter((guide) => !readme.includes(`](${guide})`))).toEqual([]);
    expect(readme.slice(0, 600)).toContain('CometChat');
  });

  it("the README's start from a clone uses the real repository, lock file and tarball name, and the AWS example a path its script writes", () => {
    const readme = read('README.md');
    const pkg = JSON.parse(read('package.json')) as { name: string; version: string; repository: { url: string }; scripts: Record<string, string> };
    const clone = /```sh\n(git clone [\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(clone).toContain(`git clone ${pkg.repository.url.replace(/^git\+/, '')}`);
    expect(clone).toMatch(/^npm ci$/m);
    expect(tracked).toContain('package-lock.json');
    expect(clone).toContain(`npm install ../chat-webhooks/${pkg.name}-${pkg.version}.tgz`);
    // Before publication first, then the registry.
    expect(readme.indexOf('git clone')).toBeLessThan(readme.indexOf('\nnpm install chat-webhooks\n'));
    const aws = JSON.parse(read('examples/aws/package.json')) as { dependencies: Record<string, string> };
    expect(aws.dependencies['chat-webhooks']).toMatch(/^file:vendor\/[\w.-]+\.tgz$/);
    expect(pkg.scripts['pack:aws']).toBe('node scripts/pack-aws-example.mjs');
    expect(read('docs/lambda-and-aws.md')).toContain('npm run pack:aws');
    expect(read('.gitignore')).toContain('examples/aws/vendor/');
  });

  it('every guide opens with its title and a short introduction', () => {
    for (const guide of guides) {
      const [title, blank, intro] = read(guide).split('\n');
      expect(title, guide).toMatch(/^# \S/);
      expect(blank, guide).toBe('');
      expect(intro, guide).toMatch(/^[A-Za-z`[]/);
    }
  });

  it('every relative link names a file that exists (a folder fails npm run docs), and every anchor a heading there', () => {
    const broken: string[] = [];
    for (const document of documents) {
      for (const [, target] of prose(read(document)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, hash] = target!.split('#') as [string, string | undefined];
        const url = path ? new URL(path, new URL(document, root)) : new URL(document, root);
        if (!existsSync(url) || !statSync(url).isFile()) {
          broken.push(`${document}: ${target} (no such file)`);
        } else if (hash !== undefined && url.pathname.endsWith('.md') && !anchors(readFileSync(url, 'utf8')).has(hash)) {
          broken.push(`${document}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
