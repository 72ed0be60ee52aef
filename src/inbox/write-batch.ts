/**
 * Group commit: every write asked for during one turn of the event loop runs in one transaction, committed
 * once (one fsync for all), and each caller's promise settles only after that commit. A store gives it the
 * function that runs a transaction; the batch never answers anyone before that function returned.
 */
interface Pending<T> {
  run: () => T;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  result?: { value: T } | { error: unknown };
}

export class WriteBatch {
  #queue: Pending<unknown>[] = [];
  #scheduled = false;
  readonly #transaction: (body: () => void) => void;

  /** `transaction(body)` runs `body` in one transaction and returns once it committed (or throws). */
  constructor(transaction: (body: () => void) => void) {
    this.#transaction = transaction;
  }

  /** Queues a write for this turn's transaction; resolves with its result once the transaction committed. */
  add<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve, reject } as Pending<unknown>);
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate runs after the poll phase: the requests that arrived in this turn have all queued.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now. */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    try {
      this.#transaction(() => {
        for (const write of batch) {
          // One write's error (a bug, a constraint) is that caller's alone; the others still commit.
          try {
            write.result = { value: write.run() };
          } catch (error) {
            write.result = { error };
          }
        }
      });
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    for (const write of batch) {
      const result = write.result;
      if (result && 'value' in result) write.resolve(result.value);
      else write.reject(result?.error);
    }
  }
}
