/**
 * The store toolkit: what every inbox store does the same way, written once, so that a store supplies only
 * its primitives (how to store, look for and change one entry in its medium). As a persistence base owns
 * expiry and hashing and each store fills in reads and writes:
 *
 * - `claimLoop` (claim-loop.ts): the claim-and-wait loop. A store gives a `ClaimSource`: its look (`take`,
 *   synchronous, a write, or a read that blocks by itself), its wait (a timer woken by `Waiters`, a
 *   notification, a pub/sub message) and its closed check; the deadline and when to stop live here.
 * - `Waiters` (waiters.ts): claims of this process waiting for work; a put wakes one, a retry or close all.
 * - `TurnBatch` (../turn-batch.ts): requests of one event-loop turn sent as one call, with at most so many
 *   calls in flight, a cap on requests and on bytes per call, a gate while the connection is down, and
 *   callers that give up dropped before the send. `WriteBatch` (../write-batch.ts): a synchronous driver's
 *   group commit (one transaction per turn).
 * - Lease tokens: `newToken` (the port's, src/delivery/port.ts: a claim's token is part of its contract).
 * - Windows (window.ts): the default windows, the `windowMs` check, the expiry sweep timer, admin batches.
 * - Rows (rows.ts): the claim and the listing of the SQL stores' common row.
 * - `LocalCoordination` (coordination.ts): the port's lock and marks in this process's memory (the memory inbox's).
 */
export { claimLoop, type ClaimSource } from './claim-loop.js';
export { Waiters } from './waiters.js';
export { GaveUp, TurnBatch, type BatchLimits } from './turn-batch.js';
export { WriteBatch } from './write-batch.js';
export { newToken } from '../../delivery/port.js';
export { DEFAULT_DURABLE_WINDOW_MS, DEFAULT_MEMORY_WINDOW_MS, EXPIRY_BATCH, EXPIRY_EVERY_MS, inBatches, startSweeps, windowOption } from './window.js';
export { claimOfRow, listingOfRow, type EntryRow } from './rows.js';
export { LocalCoordination } from './coordination.js';
