/** `validate <file|->`: checks events exactly as the receiver would, with the path of every problem. */
import { Command } from 'commander';
import { escapeControl as safe } from '../index.js';
import { EXIT_FAILED, EXIT_OK } from './errors.js';
import { formatIssue, verdictOf } from './issues.js';
import { Output } from './output.js';
import { readInput, splitDocuments } from './read-input.js';
import { summaries } from './summaries.js';

export async function validate(source: string, options: { json?: boolean }): Promise<number> {
  const output = new Output(options);
  const { color } = output;
  const documents = splitDocuments(await readInput(source));
  const where = (line: number) => (documents.length > 1 ? `line ${line}` : source === '-' ? 'stdin' : source);
  let invalid = 0;
  for (const { line, body } of documents) {
    const verdict = verdictOf(body);
    if (verdict.valid) {
      output.record({ line, valid: true, trigger: verdict.trigger, known: verdict.known });
      const unknown = verdict.known ? '' : color.yellow(' (unknown trigger: accepted, reaches onUnknown)');
      output.line(`${color.green('✓')} ${where(line)}: ${safe(verdict.trigger)}${unknown}`);
      continue;
    }
    invalid++;
    output.record({ line, valid: false, code: verdict.code, trigger: verdict.trigger, issues: verdict.issues });
    // A captured event's trigger and values (issues quote them) are a sender's: escaped as `listen` prints them.
    output.line(`${color.red('✗')} ${where(line)}: ${safe(verdict.trigger ?? '(no trigger)')} ${color.red(verdict.code)}`);
    for (const issue of verdict.issues) output.line(`    ${safe(formatIssue(issue))}`);
  }
  if (documents.length > 1) output.line(`${documents.length - invalid} valid, ${invalid} invalid`);
  return invalid === 0 ? EXIT_OK : EXIT_FAILED;
}

export function validateCommand(): Command {
  return new Command('validate')
    .description(summaries.validate.description)
    .argument('<file|->', 'a JSON or NDJSON file, or - for stdin (lines from `listen --json` work too)')
    .option('--json', 'one JSON result per event')
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks validate event.json
  $ cat captured.ndjson | chat-webhooks validate -`,
    )
    .action(async (source: string, options: { json?: boolean }) => {
      process.exitCode = await validate(source, options);
    });
}
