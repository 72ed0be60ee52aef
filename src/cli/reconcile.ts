/**
 * `chat-webhooks reconcile`: recovers what the platform gave up on during an outage, from its list of
 * messages, into the app's inbox for its workers (the inbox flags of `inbox`), with the keys deliveries have:
 * what the inbox holds already is a duplicate. `--dry-run` lists what it would offer and writes nothing. The
 * API key comes from `CHAT_API_KEY` only, so it is never in a shell's history or a process listing.
 */
import { Command, InvalidArgumentError } from 'commander';
import { ApiError, createChatClient, type ChatClient } from '../api/index.js';
import { createWebhooks, escapeControl as safe, type Inbox, type Webhooks } from '../index.js';
import type { ReconcileReport } from '../reconcile/index.js';
import { failure, usageError, EXIT_OK } from './errors.js';
import { openStore, type StoreOptions } from './inbox.js';
import { httpUrl } from './parsers.js';
import { isTerminal, Output } from './output.js';
import { summaries } from './summaries.js';

interface ReconcileFlags extends StoreOptions {
  since: number;
  until?: number;
  appId: string;
  region: string;
  webhook: string;
  baseUrl?: string;
  dryRun?: boolean;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time (ISO 8601, or anything Date reads) or a duration ago (`90m`, `2h`, `1d`, `30s`), as epoch ms. */
export function timeOrAgo(value: string, now = Date.now()): number {
  const ago = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(value.trim());
  if (ago) return now - Number(ago[1]) * (UNITS[ago[2] as string] as number);
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new InvalidArgumentError('Expected a time (2026-12-01T22:00:00Z) or a duration ago (90m, 2h, 1d).');
  return time;
}

export function reconcileCommand(): Command {
  return new Command('reconcile')
    .description(summaries.reconcile.description)
    .requiredOption('--since <time>', 'start of the window: a time (2026-12-01T22:00:00Z) or a duration ago (90m, 2h)', (value) => timeOrAgo(value))
    .option('--until <time>', 'end of the window, as --since (default: now)', (value) => timeOrAgo(value))
    .requiredOption('--app-id <id>', "the app's id (the envelope's appId: part of every key)")
    .requiredOption('--region <region>', "the app's region (us, eu, in)")
    .requiredOption('--webhook <id>', 'the webhook id the events would have come through (part of every key)')
    .option('--base-url <url>', 'the REST base instead of https://<appId>.api-<region>.<domain>/v3', httpUrl)
    .option('--sqlite <path>', 'the SQLite inbox file (sqliteInbox({ path }))')
    .option('--redis <url>', 'the Redis inbox (redisInbox({ url })), like redis://localhost:6379')
    .option('--prefix <prefix>', 'the Redis inbox prefix, when the app set one')
    .option('--postgres <url>', 'the PostgreSQL inbox (postgresInbox({ connectionString })), like postgres://user@localhost/app')
    .option('--schema <name>', 'the PostgreSQL inbox schema, when the app set one (default chat_webhooks)')
    .option('--dry-run', 'list what it would offer the inbox, and write nothing')
    .option('--json', 'NDJSON output: one record per event offered (dry run), then the report')
    .addHelpText(
      'after',
      '\nExample:\n  $ chat-webhooks reconcile --since 2h --app-id 2601c4f1a2b3c4d5 --region eu --webhook wh_chat_events --sqlite ./webhooks.db\n\n' +
        'The REST API key is read from CHAT_API_KEY, never from a flag.',
    )
    .action(async (flags: ReconcileFlags) => {
      process.exitCode = await run(flags);
    });
}

async function run(flags: ReconcileFlags): Promise<number> {
  const apiKey = process.env.CHAT_API_KEY;
  if (!apiKey) throw usageError('Set CHAT_API_KEY to the app\'s REST API key (it is never taken as a flag).');
  const stores = [flags.sqlite, flags.redis, flags.postgres].filter((store) => store !== undefined).length;
  if (flags.dryRun ? stores > 0 : stores !== 1) {
    throw usageError(flags.dryRun ? '--dry-run writes nothing: name no store.' : 'Name the inbox to recover into: --sqlite <path>, --redis <url> or --postgres <url> (or --dry-run).');
  }
  const chat = clientOf(flags, apiKey);
  const output = new Output(flags);
  const inbox = flags.dryRun ? undefined : await openStore(flags);
  // The receiver only stores (consume: false): the app's workers run the handlers, as for a delivery.
  const webhooks = createWebhooks({ auth: false, logger: {}, ...(inbox ? { inbox, consume: false } : {}) });
  if (flags.dryRun) listOffered(webhooks, output);
  try {
    const report = await walk(flags, webhooks, chat);
    summarize(report, output, inbox);
    return EXIT_OK;
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    throw failure(cause instanceof ApiError ? `The platform's list of messages failed: ${message}` : `Reconcile stopped: ${message}`);
  } finally {
    await webhooks.close();
  }
}

function clientOf(flags: ReconcileFlags, apiKey: string): ChatClient {
  try {
    return flags.baseUrl ? createChatClient({ baseUrl: flags.baseUrl, apiKey }) : createChatClient({ appId: flags.appId, region: flags.region, apiKey });
  } catch (cause) {
    throw usageError(cause instanceof Error ? cause.message : String(cause));
  }
}

async function walk(flags: ReconcileFlags, webhooks: Webhooks, chat: ChatClient): Promise<ReconcileReport> {
  const { reconcile } = await import('../reconcile/index.js');
  const terminal = isTerminal(process.stderr) && !flags.json;
  const progress = (report: Readonly<ReconcileReport>) =>
    process.stderr.write(`\rpage ${report.pages}: ${report.listed} listed, ${report.recovered} recovered, ${report.duplicates} duplicates, ${report.skipped} skipped\u001b[K`);
  try {
    return await reconcile({
      webhooks, chat, appId: flags.appId, region: flags.region, webhook: flags.webhook, since: flags.since,
      ...(flags.until === undefined ? {} : { until: flags.until }),
      ...(terminal ? { onProgress: progress } : {}),
    });
  } finally {
    if (terminal) process.stderr.write('\r\u001b[K');
  }
}

/** A dry run's receiver has no inbox: each event it would offer is printed instead of stored. */
function listOffered(webhooks: Webhooks, output: Output): void {
  webhooks.onAny((event, { key }) => {
    output.record({ trigger: event.trigger, key });
    output.line(`${output.color.bold(safe(event.trigger))}  ${output.color.dim(safe(key))}`);
  });
}

function summarize(report: ReconcileReport, output: Output, inbox: Inbox | undefined): void {
  output.record({ report });
  const kinds = Object.entries(report.skippedByKind).map(([kind, count]) => `${safe(kind)} ${count}`).join(', ');
  const recovered = inbox ? `${report.recovered} recovered into the ${inbox.kind} inbox, ${report.duplicates} already there` : `${report.recovered} to offer (dry run: nothing written)`;
  output.line(`${report.listed} messages listed in ${report.pages} page${report.pages === 1 ? '' : 's'}: ${recovered}, ${report.skipped} skipped${kinds ? ` (${kinds})` : ''}.`);
}
