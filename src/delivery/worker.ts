/**
 * `createWorker({ inbox })`: runs the handlers for the events an inbox holds, in this process, with leases,
 * retries (exponential backoff, full jitter) and dead events, the same for every store. Receivers with
 * `consume: false` store events; any number of workers, here or on other machines, handle them.
 *
 *     const worker = createWorker({ inbox: redisInbox({ url }), concurrency: 16 })
 *       .on('message_sent', async (event, { key, attempt }) => { ... })
 *       .onError((error) => log(error.code, error.attempt, error.willRetry))
 *       .start();
 *     process.once('SIGTERM', () => worker.close()); // closes the inbox too: the process exits by itself
 *
 * The loop itself lives beside the receiver's dispatch (src/delivery/consume.ts), because
 * `createWebhooks({ inbox })` runs the same loop in the receiving process and src/receive/ imports nothing
 * of src/stores/ but its port.
 */
import { createConsumer, type Worker, type WorkerOptions } from './consume.js';
import type { HandlerContext, TransactionContext } from '../dispatch/dispatcher.js';

export type { Worker, WorkerOptions };

/**
 * Creates a worker that runs the handlers of the events an inbox holds, with leases and retries.
 *
 * @example
 * ```ts
 * import { createWorker } from 'chat-webhooks';
 * import { sqliteInbox } from 'chat-webhooks/sqlite';
 *
 * const worker = createWorker({ inbox: sqliteInbox({ path: './.data/inbox.db' }), concurrency: 4 });
 * worker.on('message_sent', async (event, { attempt }) => console.log(event.data.message.id, attempt));
 * worker.start();
 * process.on('SIGTERM', () => void worker.close());
 * ```
 */
export function createWorker(options: WorkerOptions & { transaction: true }): Worker<TransactionContext>;
export function createWorker(options: WorkerOptions): Worker;
export function createWorker(options: WorkerOptions): Worker<HandlerContext> {
  return createConsumer(options);
}
