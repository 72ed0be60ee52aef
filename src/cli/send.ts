/** `send`: posts realistic events to a receiver as the platform does. */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { isKnownTrigger, triggers, type Trigger } from '../index.js';
import { EXIT_FAILED, EXIT_OK, usageError } from './errors.js';
import { formatIssue, verdictOf } from './issues.js';
import { Output } from './output.js';
import { applyOverride, collectAddition, collectOverride, type Override } from './overrides.js';
import { httpUrl, positiveInteger } from './parsers.js';
import { credentialsFrom } from './post.js';
import { runDeliveries, type Outgoing } from './run-deliveries.js';
import { newRunId, sampleEvent, unknownSampleEvent, type SampleOptions } from './sample-event.js';
import { didYouMean } from '../text/suggest.js';
import { authOptions } from './shared-options.js';
import { missingCredentialsHint } from './hints.js';
import { summaries } from './summaries.js';

interface SendOptions {
  url: string;
  user?: string;
  password?: string;
  set?: Override[];
  add?: Override[];
  file?: string;
  raw?: string;
  allowUnknown?: boolean;
  quiet?: boolean;
  count: number;
  concurrency: number;
  json?: boolean;
  progress?: boolean;
  validate: boolean;
}

function readEventFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw usageError(`Cannot read ${path}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw usageError(`${path} is not JSON: ${(cause as Error).message}.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError(`${path} must hold one JSON object (an event).`);
  return value as Record<string, unknown>;
}

/** A known trigger, or with --allow-unknown any name (its events reach the receiver's onUnknown). */
function checkTrigger(trigger: string, allowUnknown: boolean): { known?: Trigger; name: string } {
  if (isKnownTrigger(trigger)) return { known: trigger, name: trigger };
  if (allowUnknown) return { name: trigger };
  throw usageError(
    `Unknown trigger "${trigger}".${didYouMean(trigger, triggers)} See \`chat-webhooks triggers\`; ` +
      'to send one anyway (it reaches onUnknown), add --allow-unknown or give --file.',
  );
}

function freshEvent(trigger: { known?: Trigger; name: string }, sample: SampleOptions): Record<string, unknown> {
  return trigger.known ? sampleEvent(trigger.known, sample) : unknownSampleEvent(trigger.name, sample);
}

/** Builds event i: from the file as it is, or a fresh sample; then the overrides, then the receiver's check. */
function eventMaker(trigger: string | undefined, options: SendOptions): (sequence: number) => Outgoing {
  const fromFile = options.file === undefined ? undefined : readEventFile(options.file);
  if (fromFile && trigger !== undefined && fromFile.trigger !== trigger) {
    throw usageError(`${options.file} holds a "${String(fromFile.trigger)}" event, not "${trigger}".`);
  }
  const checked = fromFile ? undefined : checkTrigger(trigger as string, options.allowUnknown === true);
  const runId = newRunId();
  // New fields first, so that a --set may change what an --add made.
  const overrides = [...(options.add ?? []), ...(options.set ?? [])];
  return (sequence) => {
    const event = checked ? freshEvent(checked, { sequence, count: options.count, runId }) : structuredClone(fromFile as Record<string, unknown>);
    for (const override of overrides) applyOverride(event, override);
    if (options.validate) {
      const verdict = verdictOf(event);
      if (!verdict.valid) {
        const lines = verdict.issues.map((issue) => `  ${formatIssue(issue)}`).join('\n');
        throw usageError(`The event would be refused (${verdict.code}):\n${lines}\nFix it, or send it anyway with --no-validate.`);
      }
    }
    return { body: JSON.stringify(event), label: String(event.trigger) };
  };
}

/** `--raw`: the file's bytes as they are, not even parsed; only the label looks inside. */
function rawMaker(trigger: string | undefined, options: SendOptions): (sequence: number) => Outgoing {
  const clash = [trigger !== undefined && 'a trigger', options.file !== undefined && '--file', options.set && '--set', options.add && '--add'].filter(Boolean);
  if (clash.length > 0) throw usageError(`--raw sends the file's bytes unchanged: it does not take ${clash.join(', ')}.`);
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = new Uint8Array(readFileSync(options.raw as string));
  } catch (cause) {
    throw usageError(`Cannot read ${options.raw}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}.`);
  }
  let label = `raw ${bytes.length} bytes`;
  try {
    const { trigger: named } = JSON.parse(Buffer.from(bytes).toString('utf8')) as { trigger?: unknown };
    if (typeof named === 'string') label = `${named} (raw)`;
  } catch {
    label += ', not JSON';
  }
  return () => ({ body: bytes, label });
}

function* series(make: (sequence: number) => Outgoing, count: number): Generator<Outgoing> {
  for (let sequence = 0; sequence < count; sequence++) yield make(sequence);
}

export async function send(trigger: string | undefined, options: SendOptions): Promise<number> {
  if (trigger === undefined && options.file === undefined && options.raw === undefined) {
    throw usageError('Name a trigger (like message_sent), or give --file or --raw.');
  }
  const make = options.raw === undefined ? eventMaker(trigger, options) : rawMaker(trigger, options);
  const first = make(0); // fails before anything is sent when the event is invalid
  const output = new Output({ json: options.json === true });
  const items = (function* () {
    yield first;
    yield* series((sequence) => make(sequence + 1), options.count - 1);
  })();
  const auth = credentialsFrom(options);
  const summary = await runDeliveries(items, {
    target: { url: options.url, auth },
    total: options.count,
    concurrency: options.concurrency,
    progress: options.progress ?? (options.quiet ? false : undefined),
    quiet: options.quiet === true,
    output,
  });
  const hint = missingCredentialsHint(summary, auth !== undefined);
  if (hint) output.note(hint);
  return summary.failed === 0 ? EXIT_OK : EXIT_FAILED;
}

export function sendCommand(): Command {
  return authOptions(
    new Command('send')
      .description(summaries.send.description)
      .argument('[trigger]', 'trigger id, like message_sent (see `chat-webhooks triggers`)')
      .requiredOption('--url <url>', 'the receiver to post to', httpUrl),
  )
    .option('--set <path=value>', 'change a field the event has (repeatable); the path is from the envelope root', collectOverride)
    .option('--add <path=value>', 'add a field the event does not have (repeatable)', collectAddition)
    .option('--allow-unknown', 'send a trigger this version does not know (it reaches the receiver\'s onUnknown)')
    .option('--file <event.json>', 'send this event instead of a generated one (ids kept: repeats are duplicates)')
    .option('--raw <file>', "send the file's bytes unchanged: not parsed, checked or re-encoded (malformed JSON too)")
    .option('--count <n>', 'how many events to send', positiveInteger, 1)
    .option('--concurrency <c>', 'how many requests at a time', positiveInteger, 1)
    .addOption(new Option('--no-validate', 'send even when the event would be refused (to test a receiver)'))
    .option('--json', 'one JSON line per event, then a summary line')
    .option('-q, --quiet', 'print only the summary (no line per event, no progress bar)')
    .option('--progress', 'show the progress bar even when stderr is not a terminal')
    .option('--no-progress', 'never show the progress bar')
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks send message_sent --url http://localhost:3000/webhooks
  $ chat-webhooks send message_sent --url http://localhost:3000/webhooks --user app --password s3cret \\
      --set data.message.data.text="hello" --count 100 --concurrency 8 --quiet
  $ chat-webhooks send message_sent --url http://localhost:3000/webhooks --add data.message.data.metadata='{"a":1}'
  $ chat-webhooks send poll_closed --allow-unknown --url http://localhost:3000/webhooks
  $ chat-webhooks send --file event.json --url http://localhost:3000/webhooks
  $ chat-webhooks send --raw truncated.json --url http://localhost:3000/webhooks`,
    )
    .action(async (trigger: string | undefined, options: SendOptions) => {
      process.exitCode = await send(trigger, options);
    });
}
