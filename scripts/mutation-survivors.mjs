// Lists the mutants that survived the last `npm run mutate`, one line each (file:line, mutator, replacement),
// from Stryker's JSON report, to read them without opening the HTML report.
//   node scripts/mutation-survivors.mjs [reports/mutation/mutation.json]
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'));
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  const lines = source.split('\n');
  const counts = {};
  for (const mutant of mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
  console.log(`${file}  ${JSON.stringify(counts)}`);
  for (const mutant of mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')) {
    const { line } = mutant.location.start;
    const original = lines[line - 1].trim().slice(0, 90);
    console.log(`  ${mutant.status === 'NoCoverage' ? 'uncovered' : 'survived '} ${line}: ${mutant.mutatorName}: ${original}  =>  ${String(mutant.replacement).replace(/\s+/g, ' ').slice(0, 70)}`);
  }
}
