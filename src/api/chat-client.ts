/**
 * `createChatClient`: the chat interface (spec 4 and 5), authenticated by the `apiKey` header.
 *
 * The spec details one endpoint, `GET /users`; `request()` reaches the others with the same headers, errors
 * and retries. The users answer's shape is not in the spec: `data` holds user records (section 2.3) and
 * everything else the service sends is kept.
 */
import { z } from 'zod';
import { user } from '../events/records.js';
import { type RegionInput, chatBaseUrl, checkBaseUrl, checkSecret } from './base-url.js';
import { ValidationError } from './errors.js';
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

/** A user as the users endpoint returns it: the record of spec 2.3, every other field kept. */
export const apiUserSchema = user.loose();
export type ApiUser = z.infer<typeof apiUserSchema>;

/** Paging details the service may add; none of them is in the spec, so all are optional and kept as sent. */
const paginationSchema = z.looseObject({
  total: z.number().optional(),
  count: z.number().optional(),
  per_page: z.number().optional(),
  current_page: z.number().optional(),
  total_pages: z.number().optional(),
});

/** The answer of `GET /users`: `data` required, the rest open. */
export const userListSchema = z.looseObject({
  data: z.array(apiUserSchema),
  meta: z.looseObject({ pagination: paginationSchema.optional(), cursor: z.unknown().optional() }).optional(),
  cursor: z.unknown().optional(),
});
export type UserList = z.infer<typeof userListSchema>;

export interface UserListQuery {
  perPage?: number;
  page?: number;
  [name: string]: Query[string];
}

export interface ChatClient {
  /** The base URL every path is appended to. */
  readonly baseUrl: string;
  readonly users: {
    /** One page of `GET /users`. */
    list(query?: UserListQuery, options?: Pick<RequestOptions, 'signal'>): Promise<UserList>;
    /** Every user, page after page, until the last page or an empty one. */
    iterate(query?: UserListQuery, options?: Pick<RequestOptions, 'signal'>): AsyncGenerator<ApiUser, void, undefined>;
    /** Every page of `GET /users`, as `list` returns them, until the last page or an empty one. */
    pages(query?: UserListQuery, options?: Pick<RequestOptions, 'signal'>): AsyncGenerator<UserList, void, undefined>;
  };
  /** Any endpoint of the chat interface, e.g. `request('POST', '/messages', { body })`; resolves to the parsed JSON. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

const WHAT = 'createChatClient';

export function createChatClient(options: ChatClientOptions): ChatClient {
  if (options === null || typeof options !== 'object') {
    throw new ValidationError(`${WHAT} needs { appId, region, apiKey } (or { baseUrl, apiKey }).`);
  }
  const apiKey = checkSecret(options.apiKey, 'apiKey', WHAT);
  const baseUrl =
    options.baseUrl !== undefined ? checkBaseUrl(options.baseUrl, WHAT) : chatBaseUrl(options.appId, options.region, options.domain, WHAT);
  const transport = createTransport({ ...options, what: WHAT, baseUrl, credentials: { apiKey } });

  const list = (query: UserListQuery = {}, callOptions: Pick<RequestOptions, 'signal'> = {}) =>
    transport('GET', '/users', { query, expect: userListSchema, ...callOptions });

  async function* pages(query: UserListQuery = {}, callOptions: Pick<RequestOptions, 'signal'> = {}) {
    let previousFirst: string | undefined;
    for (let page = query.page ?? 1; ; page++) {
      const body = await list({ ...query, page }, callOptions);
      // An empty page ends the walk; so does a page that starts like the one before, which means the
      // service ignored `page` and would otherwise be asked for the same users forever.
      if (body.data.length === 0 || body.data[0]!.uid === previousFirst) return;
      previousFirst = body.data[0]!.uid;
      yield body;
      if (isLastPage(body, page)) return;
    }
  }

  async function* iterate(query?: UserListQuery, callOptions?: Pick<RequestOptions, 'signal'>) {
    for await (const body of pages(query, callOptions)) yield* body.data;
  }

  return {
    baseUrl,
    users: { list, iterate, pages },
    request: (method, path, requestOptions) => transport(method, path, requestOptions),
  };
}

/** The service said this page is the last (its `meta.pagination`); without that, an empty page ends the walk. */
function isLastPage(body: UserList, page: number): boolean {
  const pagination = body.meta?.pagination;
  const current = pagination?.current_page ?? page;
  return pagination?.total_pages !== undefined && current >= pagination.total_pages;
}
