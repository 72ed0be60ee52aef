#!/usr/bin/env node
/**
 * The `chat-webhooks` command line: one subcommand per file in this folder. Exit codes: 0 ok, 1 a failed
 * check or request, 2 a usage error. A mistake of the user's is one line on stderr, never a stack trace.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help } from 'commander';
import { commands, isCommandName } from './commands.js';
import { CliError, EXIT_FAILED, EXIT_USAGE } from './errors.js';
import { summaries } from './summaries.js';

function version(): string {
  try {
    const manifest = new URL('../../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The command argv names (`help <command>` included), if it names one. */
function requested(argv: readonly string[]): string | undefined {
  const words = argv.slice(2).filter((word) => !word.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The program with the command argv runs loaded, and every other one listed by its summary alone: commander
 * still lists them in `--help` and suggests them for a typo.
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const name = requested(argv);
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
  const terms = new Map<string, string>();
  for (const [command, summary] of Object.entries(summaries)) {
    if (command === name && isCommandName(command)) program.addCommand(await commands[command]());
    else program.addCommand(new Command(command).description(summary.description));
    terms.set(command, summary.term);
  }
  // A command not loaded has no options or arguments to show: its summary says how it is called.
  const standard = new Help();
  program.configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? standard.subcommandTerm(command) });
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
    await (await buildProgram(argv)).parseAsync(argv as string[]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander printed its message (or the help) already; 0 for --help and --version.
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    // Only a failure needs the output helpers (and, through them, the package): --version and --help stay light.
    const { escapeLines } = await import('./output.js');
    if (error instanceof CliError) {
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
