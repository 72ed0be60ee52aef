/**
 * The receiver: `createWebhooks` and what answering a delivery is made of, by stage: intake/ (admission, body
 * deadlines, commit, answers, in-flight work), auth/ (Basic credentials), parse/ (parse, validate, explain),
 * plus the normalized request every adapter translates to and the idempotency keys. This is its public face:
 * src/index.ts and the adapters import it; it exports only receive's own code (each other room has its own).
 */
export { createWebhooks } from './webhooks.js';
/** What createWebhooks throws on a mistake in its options: the rooms above (reconcile) throw the same. */
export { ConfigurationError } from '../dispatch/index.js';
export type { CatchUp, CatchUpContext, CloseOptions, CloseResult, DuplicateContext, HandleOptions, ReceiveContext, ReceiveOutcome, RedeliverOptions, Redelivery, Webhooks, WebhooksOptions } from './webhooks.js';
export { idempotencyKey } from './idempotency.js';
export type { IdempotencyKeys } from './idempotency.js';
export type { Enqueue } from './intake/forward.js';
export { parseWebhook, safeParseExplained, safeParseWebhook } from './parse/index.js';
export type { SafeParseResult, WebhookBody } from './parse/index.js';
export { verifyBasicAuth, createBasicAuthVerifier } from './auth/index.js';
export type { BasicAuthCredentials, BasicAuthOption, BasicAuthVerifier } from './auth/index.js';
export type { BodyReader, HeaderSource, WebhookRequest, WebhookResponse } from './http.js';
export { BodyArrival } from './http.js';
/** For adapters that must wait for the work after a response (Lambda): whether there is any left. */
export { workFinished } from './intake/index.js';
export type { DedupeOptions } from './intake/index.js';
