/**
 * `createWebhooks` as the package exports it: the receiver's own, which also takes the plain form of catch-up,
 * `catchUp: { chat, webhook, … }`, as `catchUp({ chat, webhook, … })` of chat-webhooks/reconcile. It lives in
 * reconcile/ because the receiver may not import reconcile, and only the main entry imports this file; the rest of
 * reconcile is loaded at the catch-up's first call, not at import, so a receiver without catchUp (a Lambda bundle)
 * never loads it, the REST client or zod.
 */
import { ConfigurationError, createWebhooks as createReceiver, type CatchUp, type CatchUpContext, type Webhooks, type WebhooksOptions } from '../receive/index.js';
import type { CatchUpOptions } from './catch-up.js';

/** The options of `createWebhooks`, with `catchUp` also taking the options of a `catchUp(...)`. */
export type CreateWebhooksOptions = Omit<WebhooksOptions, 'catchUp'> & { catchUp?: CatchUp | CatchUpOptions };

/**
 * Creates a receiver; a mistake in the options throws a `ConfigurationError` here.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.data.text));
 * webhooks.onError((error) => console.error(error.code, error.message));
 * ```
 */
export function createWebhooks(options: CreateWebhooksOptions): Webhooks {
  const { catchUp } = options ?? {};
  if (!isPlain(catchUp)) return createReceiver(options as WebhooksOptions);
  return createReceiver({ ...options, catchUp: lazyCatchUp(checked(catchUp)) });
}

const DEFAULT_HORIZON_MS = 60_000;

function isPlain(value: unknown): value is CatchUpOptions {
  const candidate = value as Partial<CatchUp> | null | undefined;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.start !== 'function';
}

/** What can be checked without loading reconcile; catchUp() checks the rest at its first call. */
function checked(options: CatchUpOptions): CatchUpOptions {
  const chat = options.chat as Partial<CatchUpOptions['chat']> | undefined;
  if (typeof chat?.messages?.list !== 'function') {
    throw new ConfigurationError('catchUp', '`catchUp.chat` must be a client from createChatClient(...) (chat-webhooks/api): it reads the list of messages.');
  }
  if (typeof options.webhook !== 'string' || options.webhook === '') {
    throw new ConfigurationError('catchUp', "`catchUp.webhook` must be the webhook's id (as its deliveries carry it), like 'wh_chat_events'.");
  }
  return options;
}

/** A CatchUp that loads chat-webhooks/reconcile's at its first call and hands every call to it. */
function lazyCatchUp(options: CatchUpOptions): CatchUp {
  let loaded: Promise<CatchUp> | undefined;
  const real = () => (loaded ??= import('./index.js').then((reconcile) => reconcile.catchUp(options)));
  return {
    horizonMs: options.horizonMs ?? DEFAULT_HORIZON_MS,
    start: async (context: CatchUpContext) => (await real()).start(context),
    resumed: async (context: CatchUpContext, lastHeard: number) => (await real()).resumed(context, lastHeard),
    heard: async (context: CatchUpContext, at: number) => (await real()).heard(context, at),
  };
}
