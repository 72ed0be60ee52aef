/**
 * `createManagementClient`: the multi-tenancy management interface (spec 1.4, 4, 5), authenticated by the
 * `key` and `secret` headers. Its base URL is not in the spec (`{mgmt_url}`), so it is required.
 */
import { type AppCreateBody, type AppCreateInput, appCreateSchema } from './app-create.js';
import { checkBaseUrl, checkSecret } from './base-url.js';
import { ValidationError, validationError } from './errors.js';
import { type ClientOptions, type RequestOptions, createTransport } from './transport.js';

export interface ManagementClientOptions extends ClientOptions {
  /** Issued with the management feature; sent as the `key` header. */
  key: string;
  /** Issued with the management feature; sent as the `secret` header. */
  secret: string;
  /** The management interface's base URL (`{mgmt_url}`), given by the vendor. */
  baseUrl: string;
}

export interface ManagementClient {
  readonly baseUrl: string;
  readonly apps: {
    /**
     * `POST /apps`. The body is checked first: a bad one throws a `ValidationError` (zod's paths) and
     * nothing is sent. Resolves to the service's answer, whose shape the spec does not give.
     */
    create<T = Record<string, unknown>>(app: AppCreateInput, options?: Pick<RequestOptions, 'signal'>): Promise<T>;
  };
  /** Any endpoint of the management interface; resolves to the parsed JSON. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

const WHAT = 'createManagementClient';

/**
 * A client of the multi-tenancy management interface (creating apps).
 *
 * @example
 * ```ts
 * import { createManagementClient } from 'chat-webhooks/api';
 *
 * const management = createManagementClient({ key: process.env.MGMT_KEY!, secret: process.env.MGMT_SECRET!, baseUrl: process.env.MGMT_URL! });
 * const app = await management.apps.create({ name: 'Support desk', region: 'eu' });
 * ```
 */
export function createManagementClient(options: ManagementClientOptions): ManagementClient {
  if (options === null || typeof options !== 'object') throw new ValidationError(`${WHAT} needs { key, secret, baseUrl }.`);
  const key = checkSecret(options.key, 'key', WHAT);
  const secret = checkSecret(options.secret, 'secret', WHAT);
  const baseUrl = checkBaseUrl(options.baseUrl, WHAT);
  const transport = createTransport({ ...options, what: WHAT, baseUrl, credentials: { key, secret } });

  return {
    baseUrl,
    apps: {
      async create<T>(app: AppCreateInput, callOptions: Pick<RequestOptions, 'signal'> = {}) {
        const parsed = appCreateSchema.safeParse(app);
        if (!parsed.success) throw validationError('apps.create: the app is not valid', parsed.error);
        const body: AppCreateBody = parsed.data;
        return transport<T>('POST', '/apps', { body, ...callOptions });
      },
    },
    request: (method, path, requestOptions) => transport(method, path, requestOptions),
  };
}
