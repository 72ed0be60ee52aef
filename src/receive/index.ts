/** The receive folder's public face: what src/index.ts re-exports and what adapters build on. */
export { createWebhooks } from './webhooks.js';
export type { CloseOptions, CloseResult, HandleOptions, Webhooks, WebhooksOptions } from './webhooks.js';
export type { InboxEntry, WebhookInbox } from './inbox.js';
export { parseWebhook, safeParseWebhook } from './parse.js';
export type { SafeParseResult, WebhookBody } from './parse.js';
export { ConfigurationError, WebhookError } from './errors.js';
export type { WebhookErrorCode, WebhookErrorDetails } from './errors.js';
export { verifyBasicAuth, createBasicAuthVerifier } from './auth.js';
export type { BasicAuthCredentials, BasicAuthOption, BasicAuthVerifier } from './auth.js';
export type { BodyReader, HeaderSource, WebhookRequest, WebhookResponse } from './http.js';
export type { LogLevel, WebhookLogger } from './logger.js';
export { rejectUnknownOptions } from './options.js';
export type { DedupeOptions } from './dedupe.js';
export type { EventOf, ParsedWebhook, Trigger, UnknownWebhookEvent, WebhookEvent } from '../events/index.js';
