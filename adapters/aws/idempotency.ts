/**
 * The consumer's memory of keys across redeliveries, in memory (the DynamoDB store is dynamo.ts). SQS delivers
 * at least once (a standard queue may hand one message out twice, and a consumer cut off mid-handler gets it
 * again), so `sqsHandler` claims each key before running its handlers through the idempotency port
 * (src/delivery/idempotency.ts: begin, complete, release); a `busy` record goes back to SQS. Expiry is checked
 * in code: DynamoDB's TTL removes items hours late, and a memory map is swept only now and then.
 */
import { ConfigurationError, rejectUnknownOptions } from '../../src/dispatch/index.js';
import { DEFAULT_DURABLE_WINDOW_MS, newToken, type Begin, type IdempotencyStore } from '../../src/delivery/index.js';

// The port itself is the delivery room's (src/delivery/idempotency.ts); chat-webhooks/aws exports its types.
export type { Begin, IdempotencyStore };

export interface MemoryIdempotencyOptions {
  /** How long a completed key is remembered. @defaultValue 86400000 (24 hours) */
  windowMs?: number;
}

/** The inboxes' durable window (src/delivery/port.ts): a key is remembered as long everywhere. */
export const DEFAULT_WINDOW_MS = DEFAULT_DURABLE_WINDOW_MS;

export function checkWindow(where: string, windowMs: number | undefined): number {
  if (windowMs === undefined) return DEFAULT_WINDOW_MS;
  // Number.isFinite, not `> 0` alone: '1000' from an environment variable compares as a number but adds as text
  // (`Date.now() + '1000'`), which made the window last for ever.
  if (!(Number.isFinite(windowMs) && windowMs > 0)) {
    throw new ConfigurationError('windowMs', `${where}: \`windowMs\` must be a positive number of milliseconds.`);
  }
  return windowMs;
}

/** The inboxes' lease token (src/delivery/port.ts): it tells two holders of one key apart. */
export { newToken };

interface Mark {
  state: 'running' | 'done';
  token: string;
  /** The lease's end (running) or the window's (done), in ms since the epoch. */
  until: number;
}

/** How many begins between two sweeps of expired keys. */
const SWEEP_EVERY = 1000;

/**
 * The same contract in this process's memory: for tests, and for a consumer that runs in one place.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { memoryIdempotency, sqsHandler } from 'chat-webhooks/aws';
 *
 * // A test of the consumer, without DynamoDB.
 * const consume = sqsHandler(createWebhooks({ auth: false }), { idempotency: memoryIdempotency() });
 * ```
 */
export function memoryIdempotency(options: MemoryIdempotencyOptions = {}): IdempotencyStore {
  rejectUnknownOptions('memoryIdempotency', options, ['windowMs']);
  const windowMs = checkWindow('memoryIdempotency', options.windowMs);
  const marks = new Map<string, Mark>();
  let begins = 0;
  const sweep = (now: number) => {
    for (const [key, mark] of marks) if (mark.until <= now) marks.delete(key);
  };
  return {
    async begin(key, leaseMs) {
      const now = Date.now();
      if (++begins % SWEEP_EVERY === 0) sweep(now);
      const mark = marks.get(key);
      if (mark && mark.until > now) return mark.state === 'done' ? { state: 'done' } : { state: 'busy' };
      const token = newToken();
      marks.set(key, { state: 'running', token, until: now + leaseMs });
      return { state: 'started', token };
    },
    async complete(key, token) {
      if (marks.get(key)?.token === token) marks.set(key, { state: 'done', token, until: Date.now() + windowMs });
    },
    async release(key, token) {
      const mark = marks.get(key);
      if (mark?.token === token && mark.state === 'running') marks.delete(key);
    },
  };
}
