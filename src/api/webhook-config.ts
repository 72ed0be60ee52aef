/**
 * A webhook's configuration (spec 2.6) and the receiver's `auth` option derived from it.
 *
 * `id` and `name` have at most 50 characters, `webhookURL` is an https URL (spec 4: the endpoint is reached
 * over HTTPS), and `username` and `password` are required when `useBasicAuth` is true. A user name with a
 * colon is refused: Basic credentials are split at the first colon, so it could never match.
 */
import { z } from 'zod';
import { ValidationError, validationError } from './errors.js';

const WEBHOOK_TEXT_MAX = 50;
const characters = (text: string): number => [...text].length;

const shortText = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .min(1, `${name} must not be empty`)
    .refine((text) => characters(text) <= WEBHOOK_TEXT_MAX, `${name} has at most ${WEBHOOK_TEXT_MAX} characters`);

function isHttpsUrl(text: string): boolean {
  return URL.canParse(text) && new URL(text).protocol === 'https:';
}

/** The Basic credentials part of a configuration, checked together. */
const basicAuthFields = {
  useBasicAuth: z.boolean().optional(),
  username: z.string().refine((name) => !name.includes(':'), 'username must not contain ":" (Basic credentials split at the first one)').optional(),
  password: z.string().optional(),
};

function requireCredentials(config: { useBasicAuth?: boolean | undefined; username?: string | undefined; password?: string | undefined }, context: z.RefinementCtx) {
  if (config.useBasicAuth !== true) return;
  for (const name of ['username', 'password'] as const) {
    if (!config[name]) context.addIssue({ code: 'custom', path: [name], message: `${name} is required when useBasicAuth is true` });
  }
}

export const webhookConfigSchema = z
  .looseObject({
    id: shortText('id'),
    name: shortText('name'),
    webhookURL: z.string({ error: 'webhookURL is required' }).refine(isHttpsUrl, 'webhookURL must be an https URL'),
    ...basicAuthFields,
    enabled: z.boolean().optional(),
  })
  .superRefine(requireCredentials);
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

/** Just the auth part of a webhook configuration, as `authFromWebhookConfig` reads it. */
const webhookAuthSchema = z.looseObject(basicAuthFields).superRefine(requireCredentials);
export interface WebhookAuthConfig {
  useBasicAuth?: boolean;
  username?: string;
  password?: string;
}

/**
 * The `auth` option of `createWebhooks` matching a webhook's configuration: its credentials when
 * `useBasicAuth` is true, `false` otherwise, which turns authentication off: any request that reaches the
 * endpoint is then accepted. Throws a `ValidationError` (never showing the password) when Basic auth is on
 * and a credential is missing.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { authFromWebhookConfig, webhookConfigSchema } from 'chat-webhooks/api';
 *
 * const config = webhookConfigSchema.parse(JSON.parse(process.env.WEBHOOK_CONFIG!));
 * const webhooks = createWebhooks({ auth: authFromWebhookConfig(config) });
 * ```
 */
export function authFromWebhookConfig(config: WebhookAuthConfig): { username: string; password: string } | false {
  if (config === null || typeof config !== 'object') throw new ValidationError('authFromWebhookConfig needs a webhook configuration object.');
  const parsed = webhookAuthSchema.safeParse(config);
  if (!parsed.success) throw validationError('authFromWebhookConfig: the webhook configuration is not usable', parsed.error);
  const { useBasicAuth, username, password } = parsed.data;
  return useBasicAuth === true ? { username: username!, password: password! } : false;
}
