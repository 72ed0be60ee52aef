/** Types of `chat-webhooks/api`, checked by `npm run typecheck` (expectTypeOf and @ts-expect-error). */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  type ApiError,
  type ApiErrorCode,
  type UserWalkOptions,
  type ButtonAction,
  type ButtonField,
  type CheckboxField,
  type FormField,
  type KnownFormField,
  type MessageData,
  type TextInputField,
  type UnknownFormField,
  type UrlNavigationAction,
  type User,
  type UserList,
  type WebhookConfig,
  appCreateSchema,
  authFromWebhookConfig,
  createChatClient,
  createManagementClient,
  form,
  formFieldSchema,
  isKnownFormField,
  messageDataSchema,
  messageTagsSchema,
  webhookConfigSchema,
  type ApiRetryOptions,
  type ChatClientOptions,
  type ManagementClientOptions,
  type RetryOptions,
} from '../../src/api/index.js';
import type { DeliveryRetryOptions } from '../../src/index.js';

const client = createChatClient({ appId: 'a', region: 'us', apiKey: 'k' });
/** Compile-time checks only: these calls would throw or reach the network if run, so they sit in a function never called. */
const compileOnly = (check: () => void) => void check;

describe('api types', () => {
  it('types the users answer with the user record, unknown fields allowed', () => {
    compileOnly(() => expectTypeOf(client.users.list()).resolves.toEqualTypeOf<UserList>());
    expectTypeOf<UserList['data']>().toEqualTypeOf<User[]>();
    expectTypeOf<User>().toEqualTypeOf<import('../../src/index.js').User>(); // the same type webhook events carry
    expectTypeOf<User['uid']>().toEqualTypeOf<string>();
    expectTypeOf<User['lastActiveAt']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<UserList>().toHaveProperty('anythingElse').toEqualTypeOf<unknown>();
    compileOnly(() => {
      expectTypeOf(client.users.iterate()).toEqualTypeOf<AsyncGenerator<UserList, void, undefined>>();
      expectTypeOf(client.users.each()).toEqualTypeOf<AsyncGenerator<User, void, undefined>>();
      expectTypeOf(client.request<{ id: string }>('GET', '/x')).resolves.toEqualTypeOf<{ id: string }>();
    });
  });

  it('checks client options at compile time', () => {
    compileOnly(() => {
      createChatClient({ apiKey: 'k', baseUrl: 'http://localhost/v3', maxResponseBytes: 1024 });
      createManagementClient({ key: 'k', secret: 's', baseUrl: 'http://localhost', maxResponseBytes: 1024 });
      // @ts-expect-error maxResponseBytes is a number of bytes
      createChatClient({ apiKey: 'k', baseUrl: 'http://localhost/v3', maxResponseBytes: '10MB' });
      expectTypeOf<UserWalkOptions>().toEqualTypeOf<{ signal?: AbortSignal; maxPages?: number }>();
      client.users.iterate({ perPage: 10 }, { maxPages: 5, signal: AbortSignal.timeout(1) });
      client.users.each({}, { maxPages: 5 });
      // @ts-expect-error maxPages is a number
      client.users.each({}, { maxPages: 'many' });
      // @ts-expect-error apiKey is required
      createChatClient({ appId: 'a', region: 'us' });
      // @ts-expect-error appId and region, or baseUrl
      createChatClient({ apiKey: 'k' });
      createChatClient({ apiKey: 'k', baseUrl: 'http://localhost/v3' });
      createChatClient({ apiKey: 'k', appId: 'a', region: 'EU', domain: 'example.test', timeoutMs: 5, retry: { retries: 1 } });
      // @ts-expect-error the management base URL is required
      createManagementClient({ key: 'k', secret: 's' });
    });
  });

  it('types apps.create input and output', () => {
    const management = createManagementClient({ key: 'k', secret: 's', baseUrl: 'https://m.example' });
    compileOnly(() => {
      expectTypeOf(management.apps.create({ name: 'n', region: 'us' })).resolves.toEqualTypeOf<Record<string, unknown>>();
      // @ts-expect-error name is required
      void management.apps.create({ region: 'us' });
    });
    expectTypeOf<z.output<typeof appCreateSchema>>().toMatchTypeOf<{ name: string; version: string; region: 'us' | 'eu' | 'in' }>();
  });

  it('infers message data and tags', () => {
    expectTypeOf<MessageData>().toEqualTypeOf<z.infer<typeof messageDataSchema>>();
    expectTypeOf<MessageData['text']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<z.infer<typeof messageTagsSchema>>().toEqualTypeOf<string[]>();
  });

  it('narrows form fields on elementType, with unknown types apart', () => {
    const field = formFieldSchema.parse({ elementType: 'checkbox', elementId: 'c', label: 'L' });
    expectTypeOf(field).toEqualTypeOf<FormField>();
    expectTypeOf<FormField>().toEqualTypeOf<KnownFormField | UnknownFormField>();
    if (!isKnownFormField(field)) {
      expectTypeOf(field).toEqualTypeOf<UnknownFormField>();
      expectTypeOf(field.elementType).toEqualTypeOf<string>();
      return;
    }
    expectTypeOf(field).toEqualTypeOf<KnownFormField>();
    expectTypeOf(field.elementType).toEqualTypeOf<'label' | 'textInput' | 'button' | 'checkbox' | 'dropdown' | 'radio' | 'singleSelect' | 'dateTime'>();
    if (field.elementType === 'checkbox') {
      expectTypeOf(field).toEqualTypeOf<CheckboxField>();
      expectTypeOf(field.label).toEqualTypeOf<string>();
      expectTypeOf(field.optional).toEqualTypeOf<boolean>();
    }
    if (field.elementType === 'button') expectTypeOf(field.action).toEqualTypeOf<ButtonAction>();
  });

  it('types the builders', () => {
    expectTypeOf(form.textInput({ elementId: 'n', label: 'Name' })).toEqualTypeOf<TextInputField>();
    expectTypeOf(form.textInput({ elementId: 'n' }).optional).toEqualTypeOf<boolean>();
    expectTypeOf(form.urlNavigation('https://x')).toEqualTypeOf<UrlNavigationAction>();
    expectTypeOf(form.button({ elementId: 'b', buttonText: 'Go', action: form.urlNavigation('https://x') })).toEqualTypeOf<ButtonField>();
    compileOnly(() => {
      // @ts-expect-error a checkbox needs its label
      form.checkbox({ elementId: 'c' });
      // @ts-expect-error a button needs an action
      form.button({ elementId: 'b', buttonText: 'Go' });
      // @ts-expect-error elementType is the builder's
      form.label({ elementId: 'l', text: 't', elementType: 'label' });
      // @ts-expect-error not a field of a label
      form.label({ elementId: 'l', text: 't', colour: 'red' });
    });
  });

  it('types webhook configs and the auth option', () => {
    expectTypeOf<WebhookConfig['webhookURL']>().toEqualTypeOf<string>();
    expectTypeOf<z.infer<typeof webhookConfigSchema>['useBasicAuth']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf(authFromWebhookConfig({})).toEqualTypeOf<{ username: string; password: string } | false>();
  });

  it('types ApiError fields', () => {
    expectTypeOf<ApiError['code']>().toEqualTypeOf<
      'http' | 'network' | 'timeout' | 'aborted' | 'invalid_response' | 'redirect' | 'response_too_large' | 'pagination_loop'
    >();
    expectTypeOf<ApiErrorCode>().toEqualTypeOf<ApiError['code']>();
    // Narrowing on the code works for the new ones as for the old.
    const describeCode = (code: ApiErrorCode) => {
      switch (code) {
        case 'redirect':
        case 'response_too_large':
        case 'pagination_loop':
          return 'refused by the client';
        case 'http':
        case 'network':
        case 'timeout':
        case 'aborted':
        case 'invalid_response':
          return 'failed';
        default:
          expectTypeOf(code).toEqualTypeOf<never>();
          return code;
      }
    };
    expectTypeOf(describeCode).returns.toEqualTypeOf<'refused by the client' | 'failed'>();
    expectTypeOf<ApiError['status']>().toEqualTypeOf<number>();
    expectTypeOf<ApiError['body']>().toEqualTypeOf<unknown>();
  });
});

describe('retry options of the clients', () => {
  it('names them ApiRetryOptions (retries do not count the first call), RetryOptions kept as its alias', () => {
    expectTypeOf<ApiRetryOptions>().toEqualTypeOf<{ retries?: number; minDelayMs?: number; maxDelayMs?: number; maxRetryAfterMs?: number }>();
    expectTypeOf<RetryOptions>().toEqualTypeOf<ApiRetryOptions>();
    expectTypeOf<ChatClientOptions['retry']>().toEqualTypeOf<number | boolean | ApiRetryOptions | undefined>();
    expectTypeOf<ManagementClientOptions['retry']>().toEqualTypeOf<number | boolean | ApiRetryOptions | undefined>();
    expectTypeOf<ApiRetryOptions>().not.toEqualTypeOf<DeliveryRetryOptions>();
    // @ts-expect-error `attempts` is the worker's count, not the client's
    const mixedUp: ApiRetryOptions = { attempts: 3 };
    void mixedUp;
  });
});
