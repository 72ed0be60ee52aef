/**
 * `chat-webhooks`: the package's main entry. It re-exports each room's public face directly: the receiver
 * (receive/), dispatch (handlers, errors, logger), delivery (the Inbox port, the worker), the in-memory store,
 * telemetry's hook types and the events.
 */
export { createWebhooks, type CreateWebhooksOptions } from './reconcile/create-webhooks.js';
export { BodyArrival, createBasicAuthVerifier, idempotencyKey, parseWebhook, safeParseWebhook, verifyBasicAuth } from './receive/index.js';
export type {
  BasicAuthCredentials,
  BasicAuthOption,
  BasicAuthVerifier,
  BodyReader,
  CatchUp,
  CatchUpContext,
  CloseOptions,
  CloseResult,
  DedupeOptions,
  DuplicateContext,
  HandleOptions,
  HeaderSource,
  IdempotencyKeys,
  ReceiveContext,
  ReceiveOutcome,
  RedeliverOptions,
  Redelivery,
  SafeParseResult,
  WebhookBody,
  WebhookRequest,
  WebhookResponse,
  Webhooks,
  WebhooksOptions,
} from './receive/index.js';
export { ConfigurationError, WebhookError, escapeControl } from './dispatch/index.js';
export type { HandlerContext, HandlerRegistry, HandlerTransaction, LogLevel, TransactionContext, WebhookErrorCode, WebhookErrorDetails, WebhookLogger } from './dispatch/index.js';
export { createWorker } from './delivery/index.js';
export type {
  DeliveryRetryOptions,
  Health,
  Inbox,
  InboxClaim,
  InboxEntry,
  InboxListing,
  InboxState,
  InboxStats,
  ListOptions,
  PutOptions,
  PutResult,
  RetryOptions,
  Worker,
  WorkerHealth,
  WorkerOptions,
} from './delivery/index.js';
export type { Telemetry } from './telemetry/hooks.js';
export { memoryInbox } from './stores/memory.js';
export type { MemoryInboxOptions } from './stores/memory.js';
// `registry` (zod schemas) is chat-webhooks/schemas': importing this entry loads no zod (issue 37).
export { triggers, isKnownTrigger, idempotencyFields } from './events/index.js';
export type {
  CallEntity,
  Connection,
  DataOf,
  EnvelopeType,
  EventOf,
  Group,
  Message,
  Occupant,
  ParsedWebhook,
  Reaction,
  Registry,
  Trigger,
  TriggerDefinition,
  UnknownWebhookEvent,
  User,
  WebhookEvent,
} from './events/index.js';
