/** Type tests of the durable-delivery surface, checked by `npm run typecheck` (and run by vitest). */
import { describe, expectTypeOf, it } from 'vitest';
import {
  createWebhooks,
  createWorker,
  memoryInbox,
  type HandlerContext,
  type Inbox,
  type InboxStats,
  type PutResult,
  type WebhookError,
} from '../../src/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';

describe('durable delivery types', () => {
  it('handlers get the typed event and a HandlerContext, on a receiver and on a worker', () => {
    const worker = createWorker({ inbox: memoryInbox() });
    worker.on('message_sent', (event, context) => {
      expectTypeOf(event.data.message.id).toEqualTypeOf<string>();
      expectTypeOf(context).toEqualTypeOf<HandlerContext>();
      expectTypeOf(context.attempt).toEqualTypeOf<number>();
      expectTypeOf(context.key).toEqualTypeOf<string>();
    });
    // @ts-expect-error a worker knows only the known triggers by name
    expectTypeOf(() => worker.on('message_sentt', () => {})).toBeFunction();
    worker.onError((error) => {
      expectTypeOf(error).toEqualTypeOf<WebhookError>();
      expectTypeOf(error.willRetry).toEqualTypeOf<boolean | undefined>();
      expectTypeOf(error.attempt).toEqualTypeOf<number | undefined>();
    });
    expectTypeOf(worker.start()).toEqualTypeOf(worker);
  });

  it('every store is an Inbox with the same admin surface', () => {
    expectTypeOf(memoryInbox()).toEqualTypeOf<Inbox>();
    expectTypeOf(sqliteInbox).returns.toEqualTypeOf<Inbox>();
    expectTypeOf(redisInbox).returns.toEqualTypeOf<Inbox>();
    expectTypeOf<Inbox['put']>().returns.toEqualTypeOf<Promise<PutResult>>();
    expectTypeOf<Inbox['stats']>().returns.toEqualTypeOf<Promise<InboxStats>>();
    // @ts-expect-error running entries are a handler's: they cannot be purged
    expectTypeOf(() => memoryInbox().purge({ state: 'running' })).toBeFunction();
  });

  it('idempotencyKeys functions get the event of their trigger', () => {
    createWebhooks({
      auth: false,
      inbox: memoryInbox(),
      consume: false,
      idempotencyKeys: {
        message_sent: (event) => {
          expectTypeOf(event.trigger).toEqualTypeOf<'message_sent'>();
          return event.data.message.id;
        },
        some_future_trigger: () => 'anything',
      },
    }).close();
  });
});

describe('store options typed without the peers’ own types', () => {
  it('sqliteInbox takes a better-sqlite3 database; redisInbox an ioredis client or its options', async () => {
    const { default: Database } = await import('better-sqlite3');
    const { Redis } = await import('ioredis');
    type SqliteOptions = Parameters<typeof sqliteInbox>[0];
    type RedisOptions = Parameters<typeof redisInbox>[0];
    expectTypeOf(new Database(':memory:')).toExtend<NonNullable<SqliteOptions['database']>>();
    expectTypeOf<import('ioredis').RedisOptions>().toExtend<NonNullable<RedisOptions['connection']>>();
    expectTypeOf(new Redis({ lazyConnect: true })).toExtend<NonNullable<RedisOptions['connection']>>();
    // ioredis options written in place, beyond the few these declarations name, are accepted as they are
    expectTypeOf({ host: 'localhost', enableReadyCheck: false, tls: {} }).toExtend<NonNullable<RedisOptions['connection']>>();
    // @ts-expect-error a port is a number
    const wrong: RedisOptions = { connection: { host: 'localhost', port: 'six' } };
    // @ts-expect-error a database is not a path
    const notADatabase: SqliteOptions = { database: './inbox.db' };
    void [wrong, notADatabase];
  });
});
