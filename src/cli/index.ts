#!/usr/bin/env node
/**
 * The `chat-webhooks` command line: one subcommand per file in this folder. Exit codes: 0 ok, 1 a failed
 * check or request, 2 a usage error. A mistake of the user's is one line on stderr, never a stack trace.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CliError, EXIT_FAILED, EXIT_USAGE } from './errors.js';
import { inboxCommand } from './inbox.js';
import { escapeLines } from './output.js';
import { listenCommand } from './listen.js';
import { reconcileCommand } from './reconcile.js';
import { replayCommand } from './replay.js';
import { sendCommand } from './send.js';
import { serveCommand } from './serve.js';
import { triggersCommand } from './triggers.js';
import { validateCommand } from './validate.js';

function version(): string {
  try {
    const manifest = new URL('../../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command('chat-webhooks')
    .description('Send, receive, validate and replay chat platform webhooks during development.')
    .version(version())
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks listen --port 3000
  $ chat-webhooks send message_sent --url http://localhost:3000/
  $ chat-webhooks <command> --help`,
    );
  for (const command of [sendCommand(), listenCommand(), validateCommand(), triggersCommand(), replayCommand(), inboxCommand(), reconcileCommand(), serveCommand()]) {
    program.addCommand(command);
  }
  // Commander exits by itself unless told not to; every command must be told, since addCommand copies nothing.
  const configure = (command: Command): void => {
    command.exitOverride().showHelpAfterError('(run with --help for usage)');
    command.commands.forEach(configure);
  };
  configure(program);
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  // `chat-webhooks triggers | head` closes the pipe early: that is the reader's choice, not a failure.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  try {
    await buildProgram().parseAsync(argv as string[]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander printed its message (or the help) already; 0 for --help and --version.
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
    } else if (error instanceof CliError) {
      // A message may quote what a file or a store held (a trigger, JSON.parse's view of the text): escaped.
      process.stderr.write(`chat-webhooks: ${escapeLines(error.message)}\n`);
      process.exitCode = error.exitCode;
    } else {
      process.stderr.write(`chat-webhooks: unexpected failure: ${escapeLines(error instanceof Error ? error.message : String(error))}\n`);
      if (process.env.DEBUG?.includes('chat-webhooks') && error instanceof Error) process.stderr.write(`${error.stack}\n`);
      process.exitCode = EXIT_FAILED;
    }
  }
}

await main();
