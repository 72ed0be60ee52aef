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
import { sqliteInbox } from '../../src/inbox/sqlite.js';
import { redisInbox } from '../../src/inbox/redis.js';

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
