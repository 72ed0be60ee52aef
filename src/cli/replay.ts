/** `replay <file.ndjson>`: re-sends what `listen --json` captured (or any NDJSON of events), in order. */
import { Command } from 'commander';
import { EXIT_FAILED, EXIT_OK, usageError } from './errors.js';
import { Output } from './output.js';
import { httpUrl, positiveNumber } from './parsers.js';
import { credentialsFrom } from './post.js';
import { readInput, splitDocuments, type Document } from './read-input.js';
import { runDeliveries, type Outgoing } from './run-deliveries.js';
import { authOptions } from './shared-options.js';
import { missingCredentialsHint } from './hints.js';
import { summaries } from './summaries.js';

interface ReplayOptions {
  url: string;
  rate?: number;
  user?: string;
  password?: string;
  json?: boolean;
  progress?: boolean;
  includeRefused?: boolean;
}

function labelOf(body: string, line: number): string {
  try {
    const { trigger } = JSON.parse(body) as { trigger?: unknown };
    return `${typeof trigger === 'string' ? trigger : '(no trigger)'} (line ${line})`;
  } catch {
    return `(not JSON) (line ${line})`;
  }
}

/**
 * What a capture holds to re-send: deliveries the receiver refused when captured (bad credentials, a wrong
 * method, an oversized body) are left out unless asked for, as the platform would not have them accepted either;
 * a note on stderr says how many and where.
 */
function deliveriesOf(documents: Document[], source: string, options: ReplayOptions, output: Output): Outgoing[] {
  const present = documents.filter(({ body }) => body.trim() !== '');
  const refused = options.includeRefused ? [] : present.filter((document) => document.refused);
  const items = present.filter((document) => !refused.includes(document)).map(({ body, line }) => ({ body, label: labelOf(body, line) }));
  if (refused.length > 0) {
    const lines = refused.map(({ line }) => line).join(', ');
    const what = refused.length === 1 ? 'delivery refused when captured (line' : 'deliveries refused when captured (lines';
    output.note(`Skipped ${refused.length} ${what} ${lines}); --include-refused sends them too.`);
  }
  if (items.length === 0) {
    throw usageError(refused.length > 0 ? `${source} holds only refused deliveries; --include-refused sends them.` : `${source} holds no deliveries.`);
  }
  return items;
}

export async function replay(source: string, options: ReplayOptions): Promise<number> {
  const output = new Output({ json: options.json === true });
  const items = deliveriesOf(splitDocuments(await readInput(source)), source, options, output);
  const auth = credentialsFrom(options);
  const summary = await runDeliveries(items, {
    target: { url: options.url, auth },
    total: items.length,
    // In order: a capture's sequence matters (an edit after its message).
    concurrency: 1,
    rate: options.rate,
    progress: options.progress,
    output,
  });
  const hint = missingCredentialsHint(summary, auth !== undefined);
  if (hint) output.note(hint);
  return summary.failed === 0 ? EXIT_OK : EXIT_FAILED;
}

export function replayCommand(): Command {
  return authOptions(
    new Command('replay')
      .description(summaries.replay.description)
      .argument('<file.ndjson>', 'what `listen --json` wrote (or NDJSON of events); - for stdin')
      .requiredOption('--url <url>', 'the receiver to post to', httpUrl),
  )
    .option('--rate <n>', 'at most n deliveries a second (default: each as soon as the last was answered)', positiveNumber)
    .option('--include-refused', 'also re-send the deliveries the receiver refused when they were captured')
    .option('--json', 'one JSON line per delivery, then a summary line')
    .option('--progress', 'show the progress bar even when stderr is not a terminal')
    .option('--no-progress', 'never show the progress bar')
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks listen --json > captured.ndjson
  $ chat-webhooks replay captured.ndjson --url http://localhost:8080/webhooks --rate 5`,
    )
    .action(async (source: string, options: ReplayOptions) => {
      process.exitCode = await replay(source, options);
    });
}
