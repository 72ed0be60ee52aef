/**
 * The Redis inbox's Lua scripts (the .lua files beside this one, shipped with the package in dist/ and
 * dist/cjs/): read once when `chat-webhooks/redis` is imported, defined on each connection the inbox uses,
 * called as ioredis commands (EVALSHA, EVAL once after Redis restarted).
 *
 * They are the inbox's data model (src/stores/redis/keys.ts): nothing of BullMQ's, so a BullMQ release changes
 * nothing here, and BullMQ's dashboards do not read it ([durable delivery guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/durable-delivery.md#redis-settings-for-durability)).
 */
import { readFileSync } from 'node:fs';

const NAMES = ['put', 'claim', 'renew', 'complete', 'fail', 'retry', 'purge', 'lock', 'unlock', 'mark'] as const;
export type ScriptName = (typeof NAMES)[number];

/** Read as this module is loaded: a missing file fails the import, not the first put. */
const SOURCES = Object.fromEntries(
  NAMES.map((name) => [name, readFileSync(new URL(`./${name}.lua`, import.meta.url), 'utf8')]),
) as Record<ScriptName, string>;

/** The few ioredis calls the scripts need. */
interface ScriptHost {
  defineCommand(name: string, definition: { lua: string }): void;
}

/** Each script's command name on an ioredis client: prefixed, so it meets none of the application's. */
const commandOf = (name: ScriptName): string => `chatWebhooksInbox_${name}`;

/** Defines every script on `client`. Without numberOfKeys, a call's first argument says how many keys follow. */
export function defineScripts(client: ScriptHost): void {
  for (const name of NAMES) client.defineCommand(commandOf(name), { lua: SOURCES[name] });
}

/** Runs script `name` with these keys and arguments (defined on `client` by defineScripts). */
export function runScript<T>(client: object, name: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<T> {
  const command = (client as Record<string, (...argv: unknown[]) => Promise<T>>)[commandOf(name)]!;
  return command.call(client, keys.length, ...keys, ...args);
}
