/**
 * The subcommands, each loaded only when it runs (issue 37): `--version` and `--help` load none, and a command
 * loads its own file alone (listen its server and page, inbox its stores' clients). Adding a command: its
 * summary in summaries.ts, its loader here.
 */
import type { Command } from 'commander';
import { summaries } from './summaries.js';

export type CommandName = keyof typeof summaries;

export const commands: { readonly [N in CommandName]: () => Promise<Command> } = {
  send: async () => (await import('./send.js')).sendCommand(),
  listen: async () => (await import('./listen.js')).listenCommand(),
  validate: async () => (await import('./validate.js')).validateCommand(),
  triggers: async () => (await import('./triggers.js')).triggersCommand(),
  replay: async () => (await import('./replay.js')).replayCommand(),
  inbox: async () => (await import('./inbox.js')).inboxCommand(),
  reconcile: async () => (await import('./reconcile.js')).reconcileCommand(),
  serve: async () => (await import('./serve.js')).serveCommand(),
};

export const isCommandName = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(commands, name);
