/**
 * Type tests: `expectTypeOf` runs here, and every `@ts-expect-error` line is checked by `npm run typecheck`
 * (tsc fails if the line it marks stops being an error).
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  createWebhooks,
  isKnownTrigger,
  parseWebhook,
  type EventOf,
  type Message,
  type ParsedWebhook,
  type Trigger,
  type UnknownWebhookEvent,
  type User,
  type BasicAuthCredentials,
  type WebhookError,
  type WebhookErrorCode,
  type WebhookEvent,
  type DeliveryRetryOptions,
  type RetryOptions,
  type WorkerOptions,
  createWorker,
  memoryInbox,
  type HandlerTransaction,
  type Worker,
  type TransactionContext,
} from '../src/index.js';
import type { ApiRetryOptions } from '../src/api/index.js';
import { createTestEvent } from '../src/testing/index.js';

const webhooks = createWebhooks({ auth: false, logger: {} });

describe('typed handler API', () => {
  it('narrows the event by trigger', () => {
    webhooks.on('message_sent', (event) => {
      expectTypeOf(event.trigger).toEqualTypeOf<'message_sent'>();
      expectTypeOf(event.data.message.id).toEqualTypeOf<string>();
      expectTypeOf(event.data.message.data.text).toEqualTypeOf<string | undefined>();
      expectTypeOf(event.data.message.sentAt).toEqualTypeOf<number | undefined>();
      // @ts-expect-error a typo in a field name is caught
      void event.data.mesage;
    });
    webhooks.on('group_member_added', (event) => {
      expectTypeOf(event.data.members).toEqualTypeOf<Record<string, User>>();
      expectTypeOf(event.data.by.uid).toEqualTypeOf<string>();
    });
    webhooks.on('call_participant_joined', (event) => {
      // Call payloads keep strings ("true"), tolerating real booleans.
      expectTypeOf(event.data.occupant.audio_call).toEqualTypeOf<string | boolean | undefined>();
      expectTypeOf(event.type).toEqualTypeOf<'call' | (string & {}) | undefined>();
    });
  });

  it('gives the union of events for a list of triggers', () => {
    webhooks.on(['message_reaction_added', 'message_reaction_removed'], (event) => {
      expectTypeOf(event.trigger).toEqualTypeOf<'message_reaction_added' | 'message_reaction_removed'>();
      expectTypeOf(event.data.reaction.messageId).toEqualTypeOf<string>();
    });
  });

  it('refuses trigger names it does not know', () => {
    // Never called: on() also refuses unknown names at run time.
    const typeOnly = () => {
      // @ts-expect-error an unknown trigger name is a type error
      webhooks.on('message_sentt', () => {});
      // @ts-expect-error also inside a list
      webhooks.on(['message_sent', 'poll_voted'], () => {});
    };
    void typeOnly;
    expectTypeOf<'message_sent'>().toExtend<Trigger>();
    expectTypeOf<'poll_voted'>().not.toExtend<Trigger>();
  });

  it('types onUnknown, onAny and onError', () => {
    webhooks.onUnknown((event) => expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>());
    webhooks.onAny((event) => expectTypeOf(event).toEqualTypeOf<ParsedWebhook>());
    webhooks.onError((error) => expectTypeOf(error).toEqualTypeOf<WebhookError>());
  });

  it('discriminates WebhookEvent by trigger', () => {
    const handle = (event: WebhookEvent) => {
      if (event.trigger === 'message_edited') {
        expectTypeOf(event.data.message.id).toEqualTypeOf<string>();
      }
      if (event.trigger === 'recording_generated') {
        expectTypeOf(event.data.recording_url).toEqualTypeOf<string>();
        // @ts-expect-error recording_generated carries no envelope `type`
        void event.type;
      }
    };
    void handle;
  });

  it('narrows a parsed webhook with isKnownTrigger', () => {
    const parsed = parseWebhook('{"trigger":"poll_voted","data":{}}');
    if (isKnownTrigger(parsed)) expectTypeOf(parsed).toEqualTypeOf<WebhookEvent>();
    expectTypeOf<EventOf<'message_sent'>['data']['message']>().toEqualTypeOf<Message>();
  });

  it('types createTestEvent by trigger and its overrides', () => {
    expectTypeOf(createTestEvent('user_blocked')).toEqualTypeOf<EventOf<'user_blocked'>>();
    const typeOnly = () =>
      // @ts-expect-error overrides follow the event's shape
      createTestEvent('message_sent', { data: { message: { id: 5 } } });
    void typeOnly;
  });
});

describe('credentials bound to apps (auth[].appId)', () => {
  it('takes an app id or a list of them per credential, beside credentials for any app', () => {
    const typeOnly = () => {
      createWebhooks({
        auth: [
          { username: 'acme', password: 'a', appId: 'app-acme' },
          { username: 'globex', password: 'g', appId: ['app-globex', 'app-globex-eu'] },
          { username: 'rotation', password: 'r' },
        ],
      });
      createWebhooks({ auth: { username: 'acme', password: 'a', appId: 'app-acme' } });
      // @ts-expect-error an app id is a string, not a number
      createWebhooks({ auth: { username: 'acme', password: 'a', appId: 2601 } });
      // @ts-expect-error nor a list of numbers
      createWebhooks({ auth: [{ username: 'acme', password: 'a', appId: [1, 2] }] });
      // @ts-expect-error the name is appId (a misspelling is no binding)
      createWebhooks({ auth: [{ username: 'acme', password: 'a', appID: 'app-acme' }] });
    };
    void typeOnly;
    expectTypeOf<BasicAuthCredentials['appId']>().toEqualTypeOf<string | readonly string[] | undefined>();
  });

  it('names the refusal app_mismatch', () => {
    expectTypeOf<'app_mismatch'>().toExtend<WebhookErrorCode>();
    webhooks.onError((error) => {
      if (error.code === 'app_mismatch') expectTypeOf(error.rawBody).toEqualTypeOf<string | Uint8Array | undefined>();
    });
  });
});

describe('retry options: the worker\'s and the REST client\'s named apart', () => {
  it('names the worker\'s DeliveryRetryOptions (attempts count the first run), RetryOptions kept as its alias', () => {
    expectTypeOf<DeliveryRetryOptions>().toEqualTypeOf<{ attempts?: number; minDelayMs?: number; maxDelayMs?: number }>();
    expectTypeOf<RetryOptions>().toEqualTypeOf<DeliveryRetryOptions>();
    expectTypeOf<NonNullable<WorkerOptions['retry']>>().toEqualTypeOf<DeliveryRetryOptions>();
    expectTypeOf<DeliveryRetryOptions>().not.toEqualTypeOf<ApiRetryOptions>();
    // @ts-expect-error `retries` is the REST client's count, not the worker's
    const mixedUp: DeliveryRetryOptions = { retries: 2 };
    void mixedUp;
  });
});

describe('transaction: true types the handlers\' context.transaction', () => {
  it('is always there with the option, optional (undefined at run time) without it', () => {
    const typeOnly = () => {
      const inbox = memoryInbox();
      const transactional = createWorker({ inbox, transaction: true });
      expectTypeOf(transactional).toEqualTypeOf<Worker<TransactionContext>>();
      transactional.on('message_sent', async (event, { transaction }) => {
        expectTypeOf(transaction).toEqualTypeOf<HandlerTransaction>();
        const { rows, rowCount } = await transaction.query<{ id: string }>('SELECT $1::text AS id', [event.data.message.id]);
        expectTypeOf(rows).toEqualTypeOf<Array<{ id: string }>>();
        expectTypeOf(rowCount).toEqualTypeOf<number | null>();
      });
      createWorker({ inbox }).on('message_sent', (_event, context) => {
        expectTypeOf(context.transaction).toEqualTypeOf<HandlerTransaction | undefined>();
        // @ts-expect-error without `transaction: true` it may be absent
        void context.transaction.query('SELECT 1');
      });
    };
    void typeOnly;
  });
});
