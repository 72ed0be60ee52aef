/**
 * Requests made during one turn of the event loop, sent together: `send` gets them all and answers each (a
 * result, or an Error for that request alone); if it throws, every request of the batch rejects with that.
 * At most `maxInFlight` batches are out at once; requests made meanwhile wait and go together in the next,
 * so a busy store gets fewer, larger batches instead of a queue of small ones.
 *
 * A batch holds `maxSize` requests at most, and (given `limits.sizeOf`) `limits.maxBytes` at most, one request
 * at least: what a batch sent carries is the connection's until the server answers, so a stalled server holds
 * `maxInFlight` batches' bytes at most while the rest wait here, where they can still be dropped.
 * `limits.canSend` holds batches back while it says no (a connection not up): call `resume()` once it says yes
 * again, and `dropWaiting(reason)` to reject what waits (the connection was lost, the store closed).
 */
type Request<I, O> = { item: I; resolve: (result: O) => void; reject: (error: unknown) => void };

export interface BatchLimits<I> {
  /** The bytes a batch carries at most (at least one request), as `sizeOf` counts them. */
  maxBytes?: number;
  sizeOf?: (item: I) => number;
  /** False holds every batch back until `resume()`. */
  canSend?: () => boolean;
}

/** What a request whose caller gave up (its signal aborted) before it was sent rejects with. */
export class GaveUp extends Error {
  constructor() {
    super('The caller gave up before the request was sent: nothing was sent for it.');
  }
}

export class TurnBatch<I, O> {
  #waiting: Request<I, O>[] = [];
  #scheduled = false;
  #inFlight = 0;
  #idle: Array<() => void> = [];
  readonly #send: (items: I[]) => Promise<Array<O | Error>>;
  readonly #maxInFlight: number;
  readonly #maxSize: number;
  readonly #limits: BatchLimits<I>;

  constructor(send: (items: I[]) => Promise<Array<O | Error>>, maxInFlight: number, maxSize = 1000, limits: BatchLimits<I> = {}) {
    this.#send = send;
    this.#maxInFlight = maxInFlight;
    this.#maxSize = maxSize;
    this.#limits = limits;
  }

  /**
   * Queues a request for the next batch. Once `signal` aborts, a request not yet sent is dropped (it rejects
   * with GaveUp and nothing of it is kept); one already sent gets its answer.
   */
  add(item: I, signal?: AbortSignal): Promise<O> {
    if (signal?.aborted) return Promise.reject(new GaveUp());
    return new Promise<O>((resolve, reject) => {
      const request: Request<I, O> = { item, resolve, reject };
      if (signal) {
        const drop = () => {
          const index = this.#waiting.indexOf(request);
          if (index === -1) return;
          this.#waiting.splice(index, 1);
          reject(new GaveUp());
          this.#checkIdle();
        };
        signal.addEventListener('abort', drop, { once: true });
        request.resolve = (result) => (signal.removeEventListener('abort', drop), resolve(result));
        request.reject = (error) => (signal.removeEventListener('abort', drop), reject(error));
      }
      this.#waiting.push(request);
      if (this.#scheduled || !this.#canSend()) return;
      this.#scheduled = true;
      // setImmediate runs after the poll phase: the requests that arrived in this turn have all queued.
      setImmediate(() => this.#next());
    });
  }

  /** How many requests wait to be sent. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Sends what waits, now that `limits.canSend` says yes again. */
  resume(): void {
    if (!this.#scheduled) this.#next();
  }

  /** Rejects every request not sent yet; those in flight get their answers. */
  dropWaiting(reason: () => unknown): void {
    for (const request of this.#waiting.splice(0)) request.reject(reason());
    this.#checkIdle();
  }

  /** Resolves once nothing waits and nothing is in flight. */
  settled(): Promise<void> {
    if (this.#inFlight === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #canSend(): boolean {
    return this.#inFlight < this.#maxInFlight && (this.#limits.canSend?.() ?? true);
  }

  #next(): void {
    this.#scheduled = false;
    if (this.#waiting.length === 0 || !this.#canSend()) return this.#checkIdle();
    const batch = this.#waiting.splice(0, this.#batchLength());
    this.#inFlight += 1;
    this.#send(batch.map((request) => request.item))
      .then(
        (results) => batch.forEach((request, index) => settleOne(request, results[index])),
        (error: unknown) => batch.forEach((request) => request.reject(error)),
      )
      .finally(() => {
        this.#inFlight -= 1;
        if (!this.#scheduled) this.#next();
      });
    // More than one batch's worth waiting: the next goes out beside this one, when allowed.
    if (this.#waiting.length > 0 && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#next());
    }
  }

  /** How many of the waiting requests the next batch takes: `maxSize`, fewer when their bytes pass `maxBytes`. */
  #batchLength(): number {
    const { maxBytes, sizeOf } = this.#limits;
    const most = Math.min(this.#maxSize, this.#waiting.length);
    if (maxBytes === undefined || sizeOf === undefined) return most;
    let bytes = sizeOf(this.#waiting[0]!.item);
    let length = 1;
    while (length < most && (bytes += sizeOf(this.#waiting[length]!.item)) <= maxBytes) length += 1;
    return length;
  }

  #checkIdle(): void {
    if (this.#inFlight > 0 || this.#waiting.length > 0) return;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}

function settleOne<I, O>(request: Request<I, O>, result: O | Error | undefined): void {
  if (result instanceof Error) request.reject(result);
  else request.resolve(result as O);
}
