/**
 * Dispatch: running an event's handlers, each isolated (one outcome per event), and what every room below
 * receive/ and delivery/ shares to say what went wrong: the handler registry (`on`, `onAny`, `onUnknown`,
 * `onError`), WebhookError and ConfigurationError, the logger, the unknown-option check. Used by the receiver
 * and the worker alike.
 */
export { ANY, Dispatcher, NO_FAILURES, UNKNOWN, isThenable, unknownTrigger } from './dispatcher.js';
export type { AnyHandler, DispatcherOptions, ErrorHandler, HandlerContext, HandlerTransaction, Outcome, TransactionContext } from './dispatcher.js';
export { registrationMethods } from './handlers.js';
export type { HandlerRegistry } from './handlers.js';
export { ConfigurationError, WebhookError, describeCause } from './errors.js';
export type { WebhookErrorCode, WebhookErrorDetails } from './errors.js';
export { consoleLogger, debugRequested, escapeControl, leveled } from './logger.js';
export type { LogLevel, WebhookLogger } from './logger.js';
export { rejectUnknownOptions } from './unknown-options.js';
export { attemptInfo, checkTelemetry, digest } from './attempts.js';
