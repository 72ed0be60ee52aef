/**
 * Storing a delivery before it is answered. A key counts as seen only once its put committed: a repeat that
 * arrives while the first put of its key is in flight waits for that put's outcome, then asks the inbox
 * itself (a duplicate if the first was stored, stored now if it failed). Nobody waits past the commit
 * timeout: the platform gives up after about 2 s, and a 503 lets it send again.
 */
import type { Inbox, InboxEntry, PutResult } from '../../delivery/port.js';
import { InboxHealth } from '../../delivery/health.js';

export class CommitTimeout extends Error {
  constructor(ms: number) {
    super(`The inbox did not commit within ${ms} ms.`);
  }
}

export class Commits {
  /** The latest put per key still in flight, across every inbox this receiver writes to. */
  readonly #inFlight = new Map<string, Promise<unknown>>();
  /** Every commit a caller still waits for (each ends by the commit timeout at the latest), for close(). */
  readonly #waited = new Set<Promise<unknown>>();
  readonly #timeoutMs: number;
  /** Every commit's outcome tells `health()` whether the inbox takes writes. */
  readonly health: InboxHealth;

  constructor(commitTimeoutMs: number, inbox: Inbox | undefined) {
    this.#timeoutMs = commitTimeoutMs;
    this.health = new InboxHealth(inbox);
  }

  /**
   * Resolves once committed (or found a duplicate); rejects on failure or after the commit timeout, or after
   * `timeoutMs` if that is shorter (the time a serverless invocation has left, say).
   */
  store(inbox: Inbox, entry: InboxEntry, timeoutMs = this.#timeoutMs): Promise<PutResult> {
    const { key } = entry;
    const earlier = this.#inFlight.get(key);
    const ms = Math.min(this.#timeoutMs, timeoutMs);
    // Aborted when the caller gives up: a store drops what it has not sent yet (src/delivery/port.ts, PutOptions).
    const giveUp = ms === Infinity ? undefined : new AbortController();
    const options = giveUp && { signal: giveUp.signal };
    const put = earlier
      ? earlier.then(() => (giveUp?.signal.aborted ? Promise.reject(new CommitTimeout(ms)) : inbox.put(entry, options)))
      : inbox.put(entry, options);
    const tracked = put.catch(() => undefined);
    this.#inFlight.set(key, tracked);
    void tracked.then(() => {
      if (this.#inFlight.get(key) === tracked) this.#inFlight.delete(key);
    });
    const answer = this.#within(put, ms, giveUp);
    const waited = answer.then(
      () => this.health.succeeded(),
      (cause: unknown) => this.health.failed(cause),
    );
    this.#waited.add(waited);
    void waited.then(() => this.#waited.delete(waited));
    return answer;
  }

  /** Resolves once every commit asked for so far has been answered (stored, duplicate, failed or timed out). */
  async settled(): Promise<void> {
    await Promise.all(this.#waited);
  }

  #within(put: Promise<PutResult>, ms: number, giveUp: AbortController | undefined): Promise<PutResult> {
    // Options refuse a timeout that is not > 0; Infinity means no timer at all.
    if (!giveUp) return put;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        giveUp.abort();
        reject(new CommitTimeout(ms));
      }, ms);
      put.then(
        (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
