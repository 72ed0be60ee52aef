// Lists the mutants that survived the last `npm run mutate`, one line each (file:line, mutator, replacement),
// from Stryker's JSON report, to read them without opening the HTML report. A survivor recorded in
// accepted-survivors.md (same file, same code line, one of its mutators) is marked accepted; any other survivor
// or uncovered mutant makes the exit status 1, so the list is checkable. Matched by the code's text, not its line
// number, so that a row stays true while the lines around it move.
//   node tools/mutation/survivors.mjs [tools/mutation/reports/mutation.json] [--accepted <file.md>] [--new]
// --new prints only the survivors not accepted.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** One cell of a Markdown table row: `\|` is a pipe of the text; a code span loses its backticks. */
function cellText(cell) {
  const text = cell.trim().replaceAll('\\|', '|');
  const fence = /^(`+)\s?([\s\S]*?)\s?\1$/.exec(text);
  return fence ? fence[2] : text;
}

/** The rows of accepted-survivors.md's table: { file, code, mutators }. */
export function parseAccepted(markdown) {
  const rows = [];
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split(/(?<!\\)\|/).map(cellText);
    const [file = '', code = '', mutators = ''] = cells;
    // The header and its separator line name no file of the tree.
    if (file === 'File' || /^:?-+:?$/.test(file)) continue;
    rows.push({ file, code, mutators: mutators.split(',').map((name) => name.trim()).filter(Boolean) });
  }
  return rows;
}

/** Every survived or uncovered mutant of a Stryker JSON report, with its code line and whether it is accepted. */
export function survivors(report, accepted) {
  const found = [];
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    for (const mutant of mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')) {
      const { line } = mutant.location.start;
      const code = (lines[line - 1] ?? '').trim();
      // An uncovered mutant is never accepted: no test reached it, so nothing has judged it equivalent.
      const isAccepted =
        mutant.status === 'Survived' &&
        accepted.some((row) => row.file === file && row.code === code && row.mutators.includes(mutant.mutatorName));
      found.push({ file, line, code, status: mutant.status, mutator: mutant.mutatorName, replacement: mutant.replacement, accepted: isAccepted });
    }
  }
  return found;
}

function main(args) {
  const option = (name) => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args.splice(at, 2)[1];
  };
  const acceptedFile = option('--accepted') ?? fileURLToPath(new URL('accepted-survivors.md', import.meta.url));
  const onlyNew = args.includes('--new');
  const reportFile = args.find((arg) => arg !== '--new') ?? fileURLToPath(new URL('reports/mutation.json', import.meta.url));
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  const listed = survivors(report, parseAccepted(readFileSync(acceptedFile, 'utf8')));
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const counts = {};
    for (const mutant of mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
    if (!onlyNew) console.log(`${file}  ${JSON.stringify(counts)}`);
    for (const each of listed.filter((s) => s.file === file && !(onlyNew && s.accepted))) {
      const status = each.status === 'NoCoverage' ? 'uncovered' : each.accepted ? 'accepted ' : 'survived ';
      const replacement = String(each.replacement).replace(/\s+/g, ' ').slice(0, 70);
      console.log(`  ${status} ${onlyNew ? `${file}:` : ''}${each.line}: ${each.mutator}: ${each.code.slice(0, 90)}  =>  ${replacement}`);
    }
  }
  const fresh = listed.filter((s) => !s.accepted).length;
  console.log(`${fresh} survivor(s) not in ${acceptedFile}, ${listed.length - fresh} accepted`);
  process.exitCode = fresh > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
