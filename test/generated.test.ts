import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { triggerTable, withTriggerTable } from '../src/docs.js';
import { triggers } from '../src/index.js';
import { samples } from '../src/samples.generated.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('generated files are up to date (npm run generate)', () => {
  it('README.md carries the trigger table rendered from the registry', () => {
    const readme = read('README.md');
    expect(withTriggerTable(readme)).toBe(readme);
    for (const trigger of triggers) expect(triggerTable()).toContain(`| \`${trigger}\` |`);
  });

  it('src/samples.generated.ts embeds exactly the fixtures', () => {
    for (const trigger of triggers) expect(samples[trigger]).toEqual(JSON.parse(read(`fixtures/${trigger}.json`)));
  });
});
