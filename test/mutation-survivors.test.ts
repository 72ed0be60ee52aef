/**
 * tools/mutation/survivors.mjs against Stryker-shaped reports: a survivor is accepted by its file, code line and
 * mutator in accepted-survivors.md, wherever the line has moved; anything else (and every uncovered mutant)
 * is listed and fails the run. And the list itself: each row still names a line of its file, or it would
 * accept nothing and hide that its code changed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const script = join(root, 'tools/mutation/survivors.mjs');
const folder = mkdtempSync(join(tmpdir(), 'survivors-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Mutant {
  line: number;
  mutatorName: string;
  status: string;
}

/** A report as Stryker's JSON reporter writes it: the files' sources and their mutants. */
function report(files: Record<string, { source: string; mutants: Mutant[] }>): string {
  const path = join(folder, `report-${Math.random().toString(36).slice(2)}.json`);
  const entries = Object.entries(files).map(([file, { source, mutants }]) => [
    file,
    {
      language: 'typescript',
      source,
      mutants: mutants.map(({ line, mutatorName, status }, id) => ({
        id: String(id),
        mutatorName,
        replacement: '""',
        status,
        location: { start: { line, column: 1 }, end: { line, column: 5 } },
      })),
    },
  ]);
  writeFileSync(path, JSON.stringify({ schemaVersion: '1', thresholds: { high: 80, low: 60 }, files: Object.fromEntries(entries) }));
  return path;
}

const accepted = join(folder, 'accepted.md');
writeFileSync(
  accepted,
  [
    '| File | Code | Mutators | Reason |',
    '|---|---|---|---|',
    "| src/a.ts | `if (a \\|\\| b) return '';` | ConditionalExpression, StringLiteral | equivalent |",
    '| src/a.ts | `` const text = `${x}`; `` | StringLiteral | a message only |',
  ].join('\n'),
);

function survivors(reportFile: string, ...flags: string[]) {
  const run = spawnSync(process.execPath, [script, reportFile, '--accepted', accepted, ...flags], { encoding: 'utf8' });
  return { status: run.status, lines: run.stdout.split('\n').filter((line) => line.startsWith('  ')), out: run.stdout };
}

describe('tools/mutation/survivors.mjs', () => {
  it('accepts a survivor by file, code and mutator wherever its line moved, pipes and backticks included', () => {
    // The accepted lines sit at 3 and 5 here, and at no particular line in the table.
    const source = ['// moved', '', "  if (a || b) return '';", '', '  const text = `${x}`;'].join('\n');
    const file = report({
      'src/a.ts': {
        source,
        mutants: [
          { line: 3, mutatorName: 'StringLiteral', status: 'Survived' },
          { line: 3, mutatorName: 'ConditionalExpression', status: 'Survived' },
          { line: 5, mutatorName: 'StringLiteral', status: 'Survived' },
          { line: 1, mutatorName: 'StringLiteral', status: 'Killed' },
        ],
      },
    });
    const run = survivors(file);
    expect(run.status).toBe(0);
    expect(run.lines.map((line) => line.trim().split(' ')[0])).toEqual(['accepted', 'accepted', 'accepted']);
    expect(run.out).toContain('0 survivor(s) not in');
    expect(survivors(file, '--new').lines).toEqual([]);
  });

  it('lists another mutator of an accepted line, the same line in another file, and every uncovered mutant', () => {
    const line = "if (a || b) return '';";
    const file = report({
      'src/a.ts': {
        source: line,
        mutants: [
          { line: 1, mutatorName: 'LogicalOperator', status: 'Survived' },
          { line: 1, mutatorName: 'StringLiteral', status: 'NoCoverage' },
        ],
      },
      'src/b.ts': { source: line, mutants: [{ line: 1, mutatorName: 'StringLiteral', status: 'Survived' }] },
    });
    const run = survivors(file, '--new');
    expect(run.status).toBe(1);
    expect(run.lines.map((each) => each.trim().split(': ')[0])).toEqual(['survived  src/a.ts:1', 'uncovered src/a.ts:1', 'survived  src/b.ts:1']);
    expect(run.out).toContain('3 survivor(s) not in');
  });

  it('a changed line is no longer accepted', () => {
    const file = report({ 'src/a.ts': { source: "if (a || b) return 'x';", mutants: [{ line: 1, mutatorName: 'StringLiteral', status: 'Survived' }] } });
    expect(survivors(file).status).toBe(1);
  });
});

describe('tools/mutation/accepted-survivors.md', () => {
  it('every row names a code line its file still has, and a mutator', async () => {
    const { parseAccepted } = (await import(script)) as { parseAccepted(text: string): { file: string; code: string; mutators: string[] }[] };
    const rows = parseAccepted(readFileSync(join(root, 'tools/mutation/accepted-survivors.md'), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    const stale = rows.filter((row) => {
      const lines = readFileSync(join(root, row.file), 'utf8').split('\n').map((line) => line.trim());
      return row.mutators.length === 0 || !lines.includes(row.code);
    });
    expect(stale).toEqual([]);
  });
});

describe('a quiet root', () => {
  it('holds only the standard files: mutation testing lives in tools/mutation/', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
    const files = tracked.filter((path) => !path.includes('/'));
    expect(files.sort()).toEqual(
      [
        '.dependency-cruiser.cjs',
        '.gitignore',
        'CHANGELOG.md',
        'LICENSE',
        'README.md',
        'SECURITY.md',
        'package-lock.json',
        'package.json',
        'tsconfig.build.json',
        'tsconfig.cjs.json',
        'tsconfig.json',
        'typedoc.json',
        'vitest.config.ts',
      ].sort(),
    );
  });
});
