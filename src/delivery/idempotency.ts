/**
 * The idempotency port: a consumer that cannot store events before running them (one fed by a queue, as
 * `sqsHandler` is) claims each key here instead, so a redelivery does not run the handlers again:
 * - `begin(key, leaseMs)` claims it for one run (`started`, with a token), unless a run completed it within
 *   the window (`done`: skipped) or another run holds an unexpired lease (`busy`: tried again later);
 * - `complete(key, token)` marks it done until the store's window from then;
 * - `release(key, token)` forgets a failed run's claim, so the retry runs at once.
 * A stale token (a lease that ran out and was taken) changes nothing. chat-webhooks/aws has two stores of it
 * (in memory, DynamoDB).
 */
export type Begin = { state: 'started'; token: string } | { state: 'done' } | { state: 'busy' };

export interface IdempotencyStore {
  begin(key: string, leaseMs: number): Promise<Begin>;
  complete(key: string, token: string): Promise<void>;
  release(key: string, token: string): Promise<void>;
}
