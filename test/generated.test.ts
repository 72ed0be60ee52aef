import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { statusTable, statusTableText, triggerTable, withDesignTables, withTables } from '../scripts/tables.mjs';
import { triggers } from '../src/index.js';
import { registry } from '../src/schemas.js';
import { idempotencyFields } from '../src/events/index.js';
import { samples } from '../src/testing/generated/samples.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('generated files are up to date (npm run generate)', () => {
  it('README.md carries the trigger, status and idempotency key tables rendered from their sources', () => {
    const readme = read('README.md');
    expect(withTables(readme, { registry, triggers, idempotencyFields })).toBe(readme);
    for (const trigger of triggers) expect(triggerTable({ registry, triggers })).toContain(`| \`${trigger}\` |`);
  });

  it('docs/design.md carries the status table rendered from the same source, the README\'s very table', () => {
    const design = read('docs/design.md');
    expect(withDesignTables(design)).toBe(design);
    expect(design).toContain(statusTableText());
    expect(read('README.md')).toContain(statusTableText());
    // One status table each, none kept by hand beside it.
    for (const text of [design, read('README.md')]) expect(text.split('\n').filter((line) => line.startsWith('| situation |'))).toHaveLength(1);
    expect(statusTable.every((row) => row.length === 3 && row.every((cell) => cell.length > 0 && !cell.includes('|')))).toBe(true);
  });

  it('src/testing/generated/samples.ts embeds exactly the fixtures', () => {
    for (const trigger of triggers) expect(samples[trigger]).toEqual(JSON.parse(read(`fixtures/${trigger}.json`)));
  });
});
