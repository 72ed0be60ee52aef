/**
 * Delivery: what happens to an event between the receiver's 200 and its handlers. The `Inbox` port every store
 * implements (port.ts, the documented contract), stored events, the worker loop (claim, run, retry with backoff,
 * dead), `createWorker`, health, who closes a shared inbox, and the idempotency port a queue's consumer claims
 * keys through. Stores import only its port and stored events; the receiver puts into it.
 */
export {
  checkState,
  DEFAULT_DURABLE_WINDOW_MS,
  DEFAULT_LIST_LIMIT,
  INBOX_STATES,
  newToken,
  pause,
} from './port.js';
export type {
  ClaimOptions,
  FailOutcome,
  Inbox,
  InboxClaim,
  InboxEntry,
  InboxListing,
  InboxState,
  InboxStats,
  InboxTransaction,
  InboxTransactions,
  ListOptions,
  PutOptions,
  PutResult,
} from './port.js';
export { eventOfBody, isStorableBody, unstorableBody } from './stored-event.js';
export { checkWorkerOptions, createConsumer } from './consume.js';
export type { Worker, WorkerOptions } from './consume.js';
export { createWorker } from './worker.js';
export { DEFAULT_RETRY, retryPolicy } from './retry-policy.js';
export type { DeliveryRetryOptions, RetryOptions, RetryPolicy } from './retry-policy.js';
export { InboxHealth } from './health.js';
export type { Health, WorkerHealth } from './health.js';
export { useInbox } from './inbox-users.js';
export type { Begin, IdempotencyStore } from './idempotency.js';
