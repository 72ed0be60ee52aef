/**
 * `inbox stats|list|show|retry|purge`: looks into a durable inbox (SQLite file, Redis or PostgreSQL) and acts
 * on it, through the store's own admin methods (the Inbox port). The store's module is loaded only when asked
 * for, so its optional peer (better-sqlite3; ioredis; pg) is needed only by those who use it.
 * `inbox migrate --postgres URL` prints (or, with --apply, runs) the PostgreSQL inbox's schema migration.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { escapeControl as safe, type Inbox, type InboxListing, type InboxState } from '../index.js';
import { CliError, EXIT_FAILED, EXIT_OK, failure, usageError } from './errors.js';
import { entryOf, findEntries, noSuchKey } from './inbox-entries.js';
import { escapeLines, Output } from './output.js';
import { positiveInteger } from './parsers.js';
import { didYouMean } from '../text/suggest.js';
import { summaries } from './summaries.js';

export interface StoreOptions {
  sqlite?: string;
  redis?: string;
  prefix?: string;
  postgres?: string;
  schema?: string;
  json?: boolean;
}

const STATES = ['pending', 'running', 'done', 'dead'] as const;
/**
 * How long the store may take to connect and answer a first question. Only that is timed: an action itself
 * (retrying 100 000 dead entries, say) goes on in batches for as long as it takes, rather than being cut in
 * half by a limit and reported failed while part of it was done.
 */
const STORE_TIMEOUT_MS = 5000;

function stateOption(value: string): InboxState {
  if ((STATES as readonly string[]).includes(value)) return value as InboxState;
  throw new InvalidArgumentError(`Expected one of ${STATES.join(', ')}.${didYouMean(value, STATES)}`);
}

/** The store's module says which optional peer it lacks and how to install it: that sentence is the message. */
function missingPeer(cause: unknown): never {
  if ((cause as NodeJS.ErrnoException).code === 'ERR_CHAT_WEBHOOKS_MISSING_PEER') throw failure((cause as Error).message);
  throw cause;
}

/** The one store the flags name; `reconcile` opens it too. */
export async function openStore(options: StoreOptions): Promise<Inbox> {
  const named = [options.sqlite, options.redis, options.postgres].filter((store) => store !== undefined);
  if (named.length !== 1) throw usageError('Name one store: --sqlite <path>, --redis <url> or --postgres <url>.');
  if (options.sqlite !== undefined) {
    // Opening a path that does not exist would create an empty database and report nothing wrong.
    if (!existsSync(options.sqlite)) throw usageError(`No such file: ${options.sqlite}.`);
    const { sqliteInbox } = await import('../stores/sqlite/index.js').catch((cause: unknown) => missingPeer(cause));
    return sqliteInbox({ path: options.sqlite });
  }
  if (options.postgres !== undefined) {
    const { postgresInbox } = await import('../stores/postgres/index.js').catch((cause: unknown) => missingPeer(cause));
    return postgresInbox({ connectionString: options.postgres, statementTimeoutMs: STORE_TIMEOUT_MS, ...(options.schema ? { schema: options.schema } : {}) });
  }
  const { redisInbox } = await import('../stores/redis/index.js').catch((cause: unknown) => missingPeer(cause));
  return redisInbox({
    url: options.redis as string,
    // A command line gives up on a server that does not answer instead of waiting for it forever.
    connection: { connectTimeout: STORE_TIMEOUT_MS, retryStrategy: (attempt: number) => (attempt > 2 ? null : 200) },
    ...(options.prefix ? { prefix: options.prefix } : {}),
  });
}

/** Opens the store, runs `work`, always closes it; a store that fails is exit 1 with its message. */
async function withStore(options: StoreOptions, work: (inbox: Inbox, output: Output) => Promise<number | void>): Promise<number> {
  const inbox = await openStore(options);
  const output = new Output(options);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${STORE_TIMEOUT_MS / 1000} s`)), STORE_TIMEOUT_MS);
  });
  try {
    await Promise.race([inbox.stats(), timeout]);
    clearTimeout(timer);
    return (await work(inbox, output)) ?? EXIT_OK;
  } catch (cause) {
    if (cause instanceof CliError) throw cause;
    throw failure(`The ${inbox.kind} inbox failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  } finally {
    clearTimeout(timer);
    await Promise.race([inbox.close().catch(() => undefined), sleep(1000)]);
  }
}

/**
 * In `--json`, the whole entry: its event and raw body too (where the store still holds them). A sender chose
 * the trigger and the key, and the error may quote the event: each goes through `escapeControl`, as in `listen`.
 */
function printListing(output: Output, entry: InboxListing): void {
  output.record({ ...entry, receivedAt: new Date(entry.receivedAt).toISOString() });
  const when = new Date(entry.receivedAt).toISOString().replace('T', ' ').slice(0, 19);
  const state = entry.state === 'dead' ? output.color.red(entry.state) : entry.state;
  output.line(`${state.padEnd(7)} ${when}  ${output.color.bold(safe(entry.trigger))}  attempts ${entry.attempts}  ${output.color.dim(safe(entry.key))}`);
  if (entry.lastError) output.line(`        ${output.color.red(safe(entry.lastError))}`);
}

function storeCommand(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .option('--sqlite <path>', 'the SQLite inbox file (sqliteInbox({ path }))')
    .option('--redis <url>', 'the Redis inbox (redisInbox({ url })), like redis://localhost:6379')
    .option('--prefix <prefix>', 'the Redis inbox prefix, when the app set one')
    .option('--postgres <url>', 'the PostgreSQL inbox (postgresInbox({ connectionString })), like postgres://user@localhost/app')
    .option('--schema <name>', 'the PostgreSQL inbox schema, when the app set one (default chat_webhooks)')
    .option('--json', 'JSON output (NDJSON for list)');
}

const example = (line: string) => `\nExample:\n  $ chat-webhooks inbox ${line}`;

function statsCommand(): Command {
  return storeCommand('stats', 'How many entries are pending, running, done and dead.')
    .addHelpText('after', example('stats --sqlite ./webhooks.db'))
    .action(async (options: StoreOptions) => {
      process.exitCode = await withStore(options, async (inbox, output) => {
        const counts = await inbox.stats();
        output.record({ kind: inbox.kind, ...counts });
        const dead = counts.dead > 0 ? output.color.red(`dead ${counts.dead}`) : `dead ${counts.dead}`;
        output.line(`${inbox.kind}: pending ${counts.pending} · running ${counts.running} · done ${counts.done} · ${dead}`);
      });
    });
}

function listCommand(): Command {
  return storeCommand('list', 'The entries in one state (dead ones by default).')
    .addOption(new Option('--state <state>', 'pending, running, done or dead').argParser(stateOption).default('dead'))
    .option('--limit <n>', 'at most this many', positiveInteger, 100)
    .addHelpText('after', example('list --state dead --redis redis://localhost:6379'))
    .action(async (options: StoreOptions & { state: InboxState; limit: number }) => {
      process.exitCode = await withStore(options, async (inbox, output) => {
        const entries = await inbox.list({ state: options.state, limit: options.limit });
        for (const entry of entries) printListing(output, entry);
        // A full page may be all there is or a part: the count says which, so that 3 lines do not read as 3 in all.
        const total = entries.length < options.limit ? entries.length : Math.max(entries.length, (await inbox.stats())[options.state]);
        const noun = total === 1 ? 'entry' : 'entries';
        output.line(total > entries.length ? `${entries.length} of ${total} ${options.state} ${noun} (--limit ${options.limit}; raise it to see more)` : `${total} ${options.state} ${noun}`);
      });
    });
}

function showCommand(): Command {
  return storeCommand('show', 'One entry: its state, attempts, last error, event and the raw body as received.')
    .argument('<key>', 'the idempotency key, from `inbox list`')
    .addHelpText('after', example('show <key> --sqlite ./webhooks.db'))
    .action(async (key: string, options: StoreOptions) => {
      process.exitCode = await withStore(options, async (inbox, output) => {
        const entry = await entryOf(inbox, key);
        printListing(output, entry);
        if (entry.event === undefined && entry.rawBody === undefined) {
          output.line(output.color.dim('(the store no longer holds its event: done entries keep only their key)'));
          return;
        }
        // JSON leaves C1 controls and U+2028/2029 raw in strings; a raw body is any text that parsed.
        output.line(`\n${output.color.bold('event')}\n${escapeLines(JSON.stringify(entry.event, null, 2))}`);
        output.line(`\n${output.color.bold('raw body')}\n${escapeLines(entry.rawBody ?? '')}`);
      });
    });
}

/** Keys given: each one is retried if dead; one that is unknown or not dead is said so, and the exit is 1. */
async function retryKeys(inbox: Inbox, output: Output, keys: string[]): Promise<number> {
  const found = await findEntries(inbox, keys);
  const dead = keys.filter((key) => found.get(key)?.state === 'dead');
  for (const key of keys.filter((key) => !dead.includes(key))) {
    const entry = found.get(key);
    output.note(entry ? `"${safe(key)}" is ${entry.state}, not dead: nothing to retry.` : await noSuchKey(inbox, key));
  }
  const retried = dead.length > 0 ? await inbox.retry(dead) : 0;
  output.record({ retried });
  output.line(`${retried} dead ${retried === 1 ? 'entry is' : 'entries are'} pending again`);
  return retried === keys.length ? EXIT_OK : EXIT_FAILED;
}

function retryCommand(): Command {
  return storeCommand('retry', 'Make dead entries pending again (all, or the keys given), attempts reset.')
    .argument('[keys...]', 'idempotency keys from `inbox list`; none: every dead entry')
    .addHelpText('after', example('retry --sqlite ./webhooks.db'))
    .action(async (keys: string[], options: StoreOptions) => {
      process.exitCode = await withStore(options, async (inbox, output) => {
        if (keys.length > 0) return retryKeys(inbox, output, keys);
        const retried = await inbox.retry();
        output.record({ retried });
        output.line(`${retried} dead ${retried === 1 ? 'entry is' : 'entries are'} pending again`);
        return EXIT_OK;
      });
    });
}

function purgeState(value: string): Exclude<InboxState, 'running'> {
  const state = stateOption(value);
  if (state === 'running') throw new InvalidArgumentError('Running entries belong to a handler; they cannot be purged.');
  return state;
}

function purgeCommand(): Command {
  return storeCommand('purge', 'Remove every entry in one state (purging done ones forgets them as duplicates).')
    .addOption(new Option('--state <state>', 'pending, done or dead (running entries belong to a handler)').argParser(purgeState).makeOptionMandatory())
    .addHelpText('after', example('purge --state done --sqlite ./webhooks.db'))
    .action(async (options: StoreOptions & { state: Exclude<InboxState, 'running'> }) => {
      process.exitCode = await withStore(options, async (inbox, output) => {
        const purged = await inbox.purge({ state: options.state });
        output.record({ purged, state: options.state });
        output.line(`${purged} ${options.state} ${purged === 1 ? 'entry' : 'entries'} removed`);
      });
    });
}

function migrateCommand(): Command {
  return new Command('migrate')
    .description('The PostgreSQL inbox schema: print the SQL that creates or upgrades it, or apply it (--apply).')
    .option('--postgres <url>', 'the database (needed with --apply), like postgres://user@localhost/app')
    .option('--schema <name>', 'the schema to create the tables in', 'chat_webhooks')
    .option('--apply', 'run the migration now (in one transaction, under the same advisory lock as the inbox takes)')
    .option('--json', 'JSON output')
    .addHelpText('after', example('migrate --schema chat_webhooks > migrations/chat-webhooks.sql'))
    .action(async (options: { postgres?: string; schema: string; apply?: boolean; json?: boolean }) => {
      const postgres = await import('../stores/postgres/index.js').catch((cause: unknown) => missingPeer(cause));
      const output = new Output(options);
      if (!options.apply) {
        const sql = postgres.migrationScript(options.schema);
        output.record({ schema: options.schema, version: postgres.SCHEMA_VERSION, sql });
        output.line(sql.trimEnd());
        return;
      }
      if (!options.postgres) throw usageError('--apply needs the database: --postgres <url>.');
      const { from, to } = await postgres.migratePostgresInbox({ connectionString: options.postgres, schema: options.schema }).catch((cause: unknown) => {
        throw failure(`The migration failed: ${cause instanceof Error ? cause.message : String(cause)}`);
      });
      output.record({ schema: options.schema, from, to });
      output.line(from === to ? `${options.schema} is at version ${to} already` : `${options.schema}: version ${from} -> ${to}`);
    });
}

export function inboxCommand(): Command {
  return new Command('inbox')
    .description(summaries.inbox.description)
    .addCommand(statsCommand())
    .addCommand(listCommand())
    .addCommand(showCommand())
    .addCommand(retryCommand())
    .addCommand(purgeCommand())
    .addCommand(migrateCommand())
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks inbox stats --sqlite ./webhooks.db
  $ chat-webhooks inbox list --state dead --sqlite ./webhooks.db
  $ chat-webhooks inbox show '2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421' --sqlite ./webhooks.db
  $ chat-webhooks inbox retry --redis redis://localhost:6379
  $ chat-webhooks inbox stats --postgres postgres://app@localhost/app
  $ chat-webhooks inbox purge --state done --sqlite ./webhooks.db --json
  $ chat-webhooks inbox migrate --postgres postgres://admin@localhost/app --apply`,
    );
}
