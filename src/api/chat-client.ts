/**
 * `createChatClient`: the chat interface (spec 4 and 5), authenticated by the `apiKey` header.
 *
 * The spec details one endpoint, `GET /users`; `request()` reaches the others with the same headers, errors
 * and retries. The users answer's shape is not in the spec: `data` holds user records (section 2.3) and
 * everything else the service sends is kept.
 */
import { z } from 'zod';
import { type User, numberLike, user } from '../events/records.js';
import { type RegionInput, chatBaseUrl, checkAppId, checkBaseUrl, checkSecret, normalizeRegion } from './base-url.js';
import { ValidationError } from './errors.js';
import { DEFAULT_MAX_PAGES, PageWalk, checkMaxPages } from './page-walk.js';
import { type ClientOptions, type Query, type RequestOptions, createTransport } from './transport.js';

interface ChatClientCommon extends ClientOptions {
  /** The app's API key from the dashboard, sent as the `apiKey` header. */
  apiKey: string;
}

/** The host is built from `appId`, `region` and `domain`, or `baseUrl` replaces the whole base. */
export type ChatClientOptions = ChatClientCommon &
  (
    | { appId: string; region: RegionInput; domain?: string; baseUrl?: undefined }
    | { baseUrl: string; appId?: string; region?: RegionInput; domain?: string }
  );

/**
 * A user as the users endpoint returns it: the record of spec 2.3, every other field kept at run time. Typed
 * as the events' `User`, so a user from a webhook and one from the API are the same type.
 */
export const apiUserSchema = user.loose();

/**
 * Paging details the service may add; none of them is in the spec, so all are optional, kept as sent, and a
 * number written as a string ("3") is tolerated.
 */
const paginationSchema = z.looseObject({
  total: numberLike.optional(),
  count: numberLike.optional(),
  per_page: numberLike.optional(),
  current_page: numberLike.optional(),
  total_pages: numberLike.optional(),
});

/** The answer of `GET /users`: `data` required, the rest open. */
export const userListSchema = z.looseObject({
  data: z.array(apiUserSchema),
  meta: z.looseObject({ pagination: paginationSchema.nullish(), cursor: z.unknown().optional() }).nullish(),
  cursor: z.unknown().optional(),
});
type ParsedUserList = z.infer<typeof userListSchema>;
/** The answer of `GET /users`: `{ data: User[]; meta?; cursor? }`, plus whatever else the service sends. */
export interface UserList {
  data: User[];
  meta?: ParsedUserList['meta'];
  cursor?: unknown;
  [field: string]: unknown;
}

export interface UserListQuery {
  perPage?: number;
  page?: number;
  [name: string]: Query[string];
}

/** Options of `users.iterate` and `users.each`. */
export interface UserWalkOptions extends Pick<RequestOptions, 'signal'> {
  /**
   * Most pages read in one walk (default 10 000); a walk that would read more rejects with an `ApiError` of
   * code `pagination_loop`, so a service that never ends its list cannot keep the caller forever.
   */
  maxPages?: number;
}

/**
 * A message as `GET /messages` lists it: the record webhooks carry (spec 2.2), every field kept. Only what a
 * walk needs is checked: its id (a numeric string) and `sentAt` (epoch seconds).
 */
export const apiMessageSchema = z.looseObject({ id: z.union([z.string(), z.number()]), sentAt: z.number() });
export type ApiMessage = z.infer<typeof apiMessageSchema>;

/** The answer of `GET /messages`: `data` ascending by `sentAt` (with `affix=append`), `meta.next` where to go on. */
export const messageListSchema = z.looseObject({
  data: z.array(apiMessageSchema),
  meta: z
    .looseObject({
      current: z.looseObject({ limit: numberLike.optional(), count: numberLike.optional() }).nullish(),
      next: z.looseObject({ affix: z.string().optional(), sentAt: numberLike.optional(), id: numberLike.optional() }).nullish(),
    })
    .nullish(),
});
export type MessageList = z.infer<typeof messageListSchema>;

/** The query of `GET /messages`, as the platform documents it; other filters pass through. */
export interface MessageListQuery {
  /** Epoch seconds: messages sent at or after. */
  fromTimestamp?: number;
  /** Epoch seconds: messages sent at or before (ignored by the platform without `fromTimestamp`). */
  toTimestamp?: number;
  affix?: 'append' | 'prepend';
  /** 1 to 1000 (the platform's default is 10). */
  limit?: number;
  /** Messages after this id. */
  id?: string | number;
  category?: string;
  types?: string;
  hideDeleted?: boolean;
  conversationId?: string;
  [name: string]: Query[string];
}

export interface ChatClient {
  /** The base URL every path is appended to. */
  readonly baseUrl: string;
  readonly messages: {
    /** One page of `GET /messages`; a walk over them (ids repeated at page edges, 429s) is chat-webhooks/reconcile's. */
    list(query?: MessageListQuery, options?: Pick<RequestOptions, 'signal'>): Promise<MessageList>;
  };
  readonly users: {
    /** One page of `GET /users`. */
    list(query?: UserListQuery, options?: Pick<RequestOptions, 'signal'>): Promise<UserList>;
    /**
     * Every page of `GET /users`, as `list` returns it, until the last page or an empty one. A page that
     * comes back (the same users, or a page number the service already reported) or more than `maxPages`
     * pages reject with an `ApiError` of code `pagination_loop`.
     */
    iterate(query?: UserListQuery, options?: UserWalkOptions): AsyncGenerator<UserList, void, undefined>;
    /** Every user, one at a time, walking the pages as `iterate` does. */
    each(query?: UserListQuery, options?: UserWalkOptions): AsyncGenerator<User, void, undefined>;
  };
  /** Any endpoint of the chat interface, e.g. `request('POST', '/messages', { body })`; resolves to the parsed JSON. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

const WHAT = 'createChatClient';

/**
 * A client of the chat REST interface; a bad `appId`, an unknown region or an empty key throws here.
 *
 * @example
 * ```ts
 * import { createChatClient } from 'chat-webhooks/api';
 *
 * const chat = createChatClient({ appId: process.env.CHAT_APP_ID!, region: 'eu', apiKey: process.env.CHAT_API_KEY! });
 * for await (const user of chat.users.each({ perPage: 100 })) console.log(user.uid, user.status);
 * ```
 */
export function createChatClient(options: ChatClientOptions): ChatClient {
  if (options === null || typeof options !== 'object') {
    throw new ValidationError(`${WHAT} needs { appId, region, apiKey } (or { baseUrl, apiKey }).`);
  }
  const apiKey = checkSecret(options.apiKey, 'apiKey', WHAT);
  const baseUrl = baseUrlOf(options);
  const transport = createTransport({ ...options, what: WHAT, baseUrl, credentials: { apiKey } });

  const list = (query: UserListQuery = {}, callOptions: Pick<RequestOptions, 'signal'> = {}) =>
    transport<UserList>('GET', '/users', { query, expect: userListSchema as z.ZodType<UserList>, ...callOptions });

  const listMessages = (query: MessageListQuery = {}, callOptions: Pick<RequestOptions, 'signal'> = {}) =>
    transport<MessageList>('GET', '/messages', { query, expect: messageListSchema, ...callOptions });

  async function* iterate(query: UserListQuery = {}, callOptions: UserWalkOptions = {}) {
    const { maxPages = DEFAULT_MAX_PAGES, ...requestOptions } = callOptions;
    const walk = new PageWalk({ maxPages: checkMaxPages(maxPages, WHAT), url: `${baseUrl}/users`, secrets: [apiKey] });
    for (let page = query.page ?? 1; ; page++) {
      walk.beforeRequest(page);
      const body = await list({ ...query, page }, requestOptions);
      if (body.data.length === 0) return;
      // A page seen before means the service ignores `page` or cycles: refused rather than walked forever.
      walk.check(page, body.data.map((user) => user.uid), body.meta?.pagination?.current_page);
      yield body;
      if (isLastPage(body, page)) return;
    }
  }

  async function* each(query?: UserListQuery, callOptions?: UserWalkOptions) {
    for await (const body of iterate(query, callOptions)) yield* body.data;
  }

  return {
    baseUrl,
    users: { list, iterate, each },
    messages: { list: listMessages },
    request: (method, path, requestOptions) => transport(method, path, requestOptions),
  };
}

/** `baseUrl` as given, or built from `appId`, `region` and `domain`. */
function baseUrlOf(options: ChatClientOptions): string {
  if (options.baseUrl === undefined) return chatBaseUrl(options.appId, options.region, options.domain, WHAT);
  const baseUrl = checkBaseUrl(options.baseUrl, WHAT);
  // With a baseUrl, appId and region build nothing, but a wrong one given alongside is still a mistake.
  if (options.appId !== undefined) checkAppId(options.appId, WHAT);
  if (options.region !== undefined) normalizeRegion(options.region, WHAT);
  return baseUrl;
}

/** The service said this page is the last (its `meta.pagination`); without that, an empty page ends the walk. */
function isLastPage(body: UserList, page: number): boolean {
  const pagination = body.meta?.pagination;
  const current = Number(pagination?.current_page ?? page);
  const total = Number(pagination?.total_pages ?? Number.NaN);
  return current >= total;
}
