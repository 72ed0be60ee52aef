// Compiled twice, as types.ts (CommonJS: dist/cjs declarations) and types.mts (ES module). The declarations
// of the entries with optional peers compile with skipLibCheck off while none of the peers (nor their @types)
// is installed: they describe what they take without importing the peers' types.
import type { Inbox } from 'chat-webhooks';
import type { sqliteInbox, SqliteInboxOptions } from 'chat-webhooks/sqlite';
import type { redisInbox, RedisInboxOptions } from 'chat-webhooks/redis';
import type { postgresInbox, PostgresInboxOptions } from 'chat-webhooks/postgres';
// Hono is no peer at all: the adapter's types describe the Context members it reads.
import type { HonoContext, honoHandler } from 'chat-webhooks/hono';

export const sqliteOptions: SqliteInboxOptions = { path: './inbox.db', windowMs: 60_000 };
export const redisOptions: RedisInboxOptions = { url: 'redis://localhost:6379', connection: { host: 'localhost', tls: {} } };
export const postgresOptions: PostgresInboxOptions = { connectionString: 'postgres://app@localhost/app', schema: 'chat_webhooks' };
export type Stores = [ReturnType<typeof sqliteInbox>, ReturnType<typeof redisInbox>, ReturnType<typeof postgresInbox>, Inbox];
export type Route = (c: HonoContext) => ReturnType<ReturnType<typeof honoHandler>>;
