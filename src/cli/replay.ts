/** `replay <file.ndjson>`: re-sends what `listen --json` captured (or any NDJSON of events), in order. */
import { Command } from 'commander';
import { EXIT_FAILED, EXIT_OK, usageError } from './errors.js';
import { Output } from './output.js';
import { httpUrl, positiveNumber } from './parsers.js';
import { credentialsFrom } from './post.js';
import { readInput, splitDocuments } from './read-input.js';
import { runDeliveries, type Outgoing } from './run-deliveries.js';
import { authOptions } from './shared-options.js';

interface ReplayOptions {
  url: string;
  rate?: number;
  user?: string;
  password?: string;
  json?: boolean;
  progress?: boolean;
}

function labelOf(body: string, line: number): string {
  try {
    const { trigger } = JSON.parse(body) as { trigger?: unknown };
    return `${typeof trigger === 'string' ? trigger : '(no trigger)'} (line ${line})`;
  } catch {
    return `(not JSON) (line ${line})`;
  }
}

export async function replay(source: string, options: ReplayOptions): Promise<number> {
  const documents = splitDocuments(await readInput(source));
  const items: Outgoing[] = documents
    .filter(({ body }) => body.trim() !== '')
    .map(({ body, line }) => ({ body, label: labelOf(body, line) }));
  if (items.length === 0) throw usageError(`${source} holds no deliveries.`);
  const summary = await runDeliveries(items, {
    target: { url: options.url, auth: credentialsFrom(options) },
    total: items.length,
    // In order: a capture's sequence matters (an edit after its message).
    concurrency: 1,
    rate: options.rate,
    progress: options.progress,
    output: new Output({ json: options.json === true }),
  });
  return summary.failed === 0 ? EXIT_OK : EXIT_FAILED;
}

export function replayCommand(): Command {
  return authOptions(
    new Command('replay')
      .description('Re-send, in order, the deliveries `listen --json` captured.')
      .argument('<file.ndjson>', 'what `listen --json` wrote (or NDJSON of events); - for stdin')
      .requiredOption('--url <url>', 'the receiver to post to', httpUrl),
  )
    .option('--rate <n>', 'at most n deliveries a second (default: each as soon as the last was answered)', positiveNumber)
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
