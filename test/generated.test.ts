import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keysTable, statusTable, statusTableText, tableFiles, triggerTable, withDesignTables, withTables } from '../scripts/tables.mjs';
import { triggers } from '../src/index.js';
import { registry } from '../src/receive/schemas.js';
import { idempotencyFields } from '../src/events/index.js';
import { samples } from '../src/testing/generated/samples.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('generated files are up to date (npm run generate)', () => {
  it('the guides carry the trigger, status and idempotency key tables rendered from their sources, each table in one guide', () => {
    for (const file of new Set(Object.values(tableFiles))) {
      const guide = read(file);
      expect(withTables(guide, { registry, triggers, idempotencyFields }, file)).toBe(guide);
    }
    for (const trigger of triggers) expect(read(tableFiles.triggers)).toContain(`| \`${trigger}\` |`);
    expect(read(tableFiles.keys)).toContain(keysTable({ idempotencyFields }));
    expect(read(tableFiles.triggers)).toContain(triggerTable({ registry, triggers }));
  });

  it('docs/design.md carries the status table rendered from the same source, the guide\'s very table', () => {
    const design = read('docs/design.md');
    expect(withDesignTables(design)).toBe(design);
    expect(design).toContain(statusTableText());
    expect(read(tableFiles.status)).toContain(statusTableText());
    // One status table each, none kept by hand beside it, and none left in the README.
    for (const text of [design, read(tableFiles.status)]) expect(text.split('\n').filter((line) => line.startsWith('| situation |'))).toHaveLength(1);
    expect(read('README.md')).not.toContain('| situation |');
    expect(statusTable.every((row) => row.length === 3 && row.every((cell) => cell.length > 0 && !cell.includes('|')))).toBe(true);
  });

  it('src/testing/generated/samples.ts embeds exactly the fixtures', () => {
    for (const trigger of triggers) expect(samples[trigger]).toEqual(JSON.parse(read(`fixtures/${trigger}.json`)));
  });
});
