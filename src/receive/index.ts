/** The receive folder's public face: what src/index.ts re-exports and what adapters build on. */
export { createWebhooks } from './webhooks.js';
export type { CloseOptions, CloseResult, DuplicateContext, HandleOptions, Health, ReceiveContext, ReceiveOutcome, Webhooks, WebhooksOptions } from './webhooks.js';
// Every type of the hooks an implementation of `telemetry` writes to (they are all public).
export type * from '../telemetry/hooks.js';
export { createConsumer, checkWorkerOptions } from './consume.js';
export type { Worker, WorkerOptions } from './consume.js';
export type { DeliveryRetryOptions, RetryOptions } from './retry-policy.js';
export type { HandlerContext } from './dispatch.js';
export type { HandlerRegistry } from './handlers.js';
export { idempotencyKey } from './idempotency.js';
export type { IdempotencyKeys } from './idempotency.js';
export type { Enqueue } from './forward.js';
export type {
  ClaimOptions,
  FailOutcome,
  Inbox,
  InboxClaim,
  InboxEntry,
  InboxListing,
  InboxState,
  InboxStats,
  ListOptions,
  PutOptions,
  PutResult,
} from '../inbox/port.js';
// For the stores outside src/inbox/ (chat-webhooks/aws's idempotency stores): the lease token and the
// window every durable store defaults to, one source each.
export { DEFAULT_DURABLE_WINDOW_MS, newToken } from '../inbox/port.js';
export { parseWebhook, safeParseWebhook } from './parse.js';
export type { SafeParseResult, WebhookBody } from './parse.js';
export { ConfigurationError, WebhookError } from './errors.js';
export type { WebhookErrorCode, WebhookErrorDetails } from './errors.js';
export { verifyBasicAuth, createBasicAuthVerifier } from './auth.js';
export type { BasicAuthCredentials, BasicAuthOption, BasicAuthVerifier } from './auth.js';
export type { BodyReader, HeaderSource, WebhookRequest, WebhookResponse } from './http.js';
export { BodyArrival } from './http.js';
/** For adapters that must wait for the work after a response (Lambda): whether there is any left. */
export { workFinished } from './in-flight.js';
export { escapeControl } from './logger.js';
export type { LogLevel, WebhookLogger } from './logger.js';
export { rejectUnknownOptions } from './options.js';
// For an adapter's optional peers (chat-webhooks/aws's SDK clients): the check and the sentence the stores use.
export { missingPeerError, notInstalled } from '../platform/peer.js';
export type { DedupeOptions } from './dedupe.js';
export type { EventOf, ParsedWebhook, Trigger, UnknownWebhookEvent, WebhookEvent } from '../events/index.js';
