// `node bench/entry-sizes.mjs`: records each public entry's bundled size (bench/lib/entry-sizes.mjs) into
// bench/results/entry-sizes.json, which test/cold/entry-sizes.test.ts holds every entry to (+5 %). Needs `npm run build`.
import { writeFileSync } from 'node:fs';
import { entrySizes } from './lib/entry-sizes.mjs';

const sizes = await entrySizes();
writeFileSync(new URL('results/entry-sizes.json', import.meta.url), `${JSON.stringify({ unit: 'bytes, gzipped', sizes }, null, 2)}\n`);
console.log(sizes);
