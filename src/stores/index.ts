/**
 * Stores: the implementations of the `Inbox` port (src/delivery/port.ts), each supplying only its primitives
 * to the toolkit in kit/ (the claim loop, waiters, turn and write batches, windows, rows): memory.ts (in this
 * process, not durable), sqlite/ (one machine, one file), redis/ (many machines; its own Lua scripts),
 * postgres/ (many machines, one database). Each is its own package entry (`chat-webhooks`, `/sqlite`,
 * `/redis`, `/postgres`) and loads its optional peer itself, so this file names their option types only:
 * importing it loads no store.
 */
export type { MemoryInboxOptions } from './memory.js';
export type { SqliteInboxOptions } from './sqlite/index.js';
export type { RedisInboxOptions } from './redis/index.js';
export type { PostgresInboxOptions } from './postgres/index.js';
