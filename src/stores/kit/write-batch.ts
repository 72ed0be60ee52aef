/**
 * Group commit: every write asked for during one turn of the event loop runs in one transaction, committed
 * once (one fsync for all), and each caller's promise settles only after that commit. A store gives it the
 * function that runs a transaction; the batch never answers anyone before that function returned, nor before
 * the promise it may return (the commit reaching the disk, flushed off the event loop) resolved. A write
 * says whether it must reach the disk before its caller hears back (a put, answered 200 by the receiver) or
 * may be lost to a power cut without losing an event (a claim or a completion: the event is handed out
 * again); the transaction is told whether any write of the batch must.
 */
interface Pending<T> {
  run: () => T;
  mustSync: boolean;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  result?: { value: T } | { error: unknown };
}

type Transaction = (body: () => void, mustSync: boolean) => Promise<void> | void;

export class WriteBatch {
  #queue: Pending<unknown>[] = [];
  #scheduled = false;
  readonly #transaction: Transaction;

  /**
   * `transaction(body, mustSync)` runs `body` in one transaction and returns once it committed (or throws);
   * when `mustSync`, it returns a promise that resolves once the commit is on the disk.
   */
  constructor(transaction: Transaction) {
    this.#transaction = transaction;
  }

  /** Queues a write for this turn's transaction; resolves with its result once the transaction committed. */
  add<T>(run: () => T, mustSync = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, mustSync, resolve, reject } as Pending<unknown>);
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
    let mustSync = false;
    for (const write of batch) mustSync ||= write.mustSync;
    let synced: Promise<void> | void;
    try {
      synced = this.#transaction(() => {
        for (const write of batch) {
          // One write's error (a bug, a constraint) is that caller's alone; the others still commit.
          try {
            write.result = { value: write.run() };
          } catch (error) {
            write.result = { error };
          }
        }
      }, mustSync);
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    if (!synced) return settle(batch);
    synced.then(
      () => settle(batch),
      (error: unknown) => {
        for (const write of batch) write.reject(error);
      },
    );
  }
}

/** Each write's own result or error, once its transaction is committed (and synced when it had to be). */
function settle(batch: Pending<unknown>[]): void {
  for (const write of batch) {
    const result = write.result;
    if (result && 'value' in result) write.resolve(result.value);
    else write.reject(result?.error);
  }
}
