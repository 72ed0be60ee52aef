import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { triggerTable, withTables } from '../scripts/tables.mjs';
import { registry, triggers } from '../src/index.js';
import { idempotencyFields } from '../src/events/index.js';
import { samples } from '../src/testing/generated/samples.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('generated files are up to date (npm run generate)', () => {
  it('README.md carries the trigger, status and idempotency key tables rendered from their sources', () => {
    const readme = read('README.md');
    expect(withTables(readme, { registry, triggers, idempotencyFields })).toBe(readme);
    for (const trigger of triggers) expect(triggerTable({ registry, triggers })).toContain(`| \`${trigger}\` |`);
  });

  it('src/testing/generated/samples.ts embeds exactly the fixtures', () => {
    for (const trigger of triggers) expect(samples[trigger]).toEqual(JSON.parse(read(`fixtures/${trigger}.json`)));
  });
});
