/**
 * Requests made during one turn of the event loop, sent together: `send` gets them all and answers each (a
 * result, or an Error for that request alone); if it throws, every request of the batch rejects with that.
 * At most `maxInFlight` batches are out at once; requests made meanwhile wait and go together in the next,
 * so a busy store gets fewer, larger batches instead of a queue of small ones.
 */
type Request<I, O> = { item: I; resolve: (result: O) => void; reject: (error: unknown) => void };

/** What a request whose caller gave up (its signal aborted) before it was sent rejects with. */
export class GaveUp extends Error {
  constructor() {
    super('The caller gave up before the request was sent: nothing was sent for it.');
  }
}

/** A bound on a batch's items by weight (a body's length): `of(item)` each, `max` together. */
export interface BatchWeight<I> {
  of: (item: I) => number;
  max: number;
}

export class TurnBatch<I, O> {
  #waiting: Request<I, O>[] = [];
  #scheduled = false;
  #inFlight = 0;
  #idle: Array<() => void> = [];
  readonly #send: (items: I[]) => Promise<Array<O | Error>>;
  readonly #maxInFlight: number;
  readonly #maxSize: number;
  readonly #weight: BatchWeight<I> | undefined;

  /** `weight`, when given, bounds a batch by the sum of its items' weights too (one item at least). */
  constructor(send: (items: I[]) => Promise<Array<O | Error>>, maxInFlight: number, maxSize = 1000, weight?: BatchWeight<I>) {
    this.#send = send;
    this.#maxInFlight = maxInFlight;
    this.#maxSize = maxSize;
    this.#weight = weight;
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
      if (this.#scheduled || this.#inFlight >= this.#maxInFlight) return;
      this.#scheduled = true;
      // setImmediate runs after the poll phase: the requests that arrived in this turn have all queued.
      setImmediate(() => this.#next());
    });
  }

  /** Rejects every request not sent yet with `reason()` (the store cannot take them: nothing of them is kept). */
  rejectWaiting(reason: () => unknown): void {
    for (const request of this.#waiting.splice(0)) request.reject(reason());
    this.#checkIdle();
  }

  /** Resolves once nothing waits and nothing is in flight. */
  settled(): Promise<void> {
    if (this.#inFlight === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #next(): void {
    this.#scheduled = false;
    if (this.#waiting.length === 0 || this.#inFlight >= this.#maxInFlight) return this.#checkIdle();
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

  /** How many of the waiting requests the next batch takes. */
  #batchLength(): number {
    const length = Math.min(this.#maxSize, this.#waiting.length);
    if (!this.#weight) return length;
    const { of, max } = this.#weight;
    let total = 0;
    for (let taken = 0; taken < length; taken += 1) {
      total += of(this.#waiting[taken]!.item);
      if (taken > 0 && total > max) return taken;
    }
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
