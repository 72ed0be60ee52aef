/**
 * `chat-webhooks/reconcile`: recovering what the platform gave up on while the receiver was down, from its
 * list of messages, through the receiver with the same keys. It sits above the receiver and the REST client:
 * neither imports it. Re-exports only.
 */
export { reconcile, ReconcileError } from './reconcile.js';
export { catchUp } from './catch-up.js';
export type { CatchUpOptions } from './catch-up.js';
export type { ReconcileOptions, ReconcileReport } from './reconcile.js';
export type { EnvelopeParts } from './rebuild.js';
