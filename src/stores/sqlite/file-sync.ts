/**
 * Flushes one file to the disk off the event loop: `fsync` runs on libuv's thread pool, so the receiver keeps
 * reading requests while the disk works, where a commit with `synchronous=FULL` would stop the event loop for
 * the whole fsync (about 0.6 ms here, per commit).
 *
 * Callers that ask while an fsync is running share the next one: the running one may have started before
 * their writes. So at most one fsync runs, and one waits, however many commits ask.
 *
 * After a failed fsync the kernel may already have dropped the pages it could not write, and a later fsync can
 * report success without them; so one failure fails every later call, until the file is opened again.
 */
import { close, fsync, openSync } from 'node:fs';

export class FileSync {
  readonly #fd: number;
  #running: Promise<void> | undefined;
  #following: Promise<void> | undefined;
  #failure: Error | undefined;

  /** Opens `path` (which must exist) for flushing; `fsync` flushes the file whoever wrote it. */
  constructor(path: string) {
    this.#fd = openSync(path, 'r+');
  }

  /** Resolves once every byte written to the file before this call is on the disk. */
  sync(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (!this.#running) return (this.#running = this.#flush());
    this.#following ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#following = undefined;
        return this.sync();
      });
    return this.#following;
  }

  /** Closes the file after the flushes asked for so far. */
  async close(): Promise<void> {
    await Promise.allSettled([this.#running, this.#following]);
    await new Promise<void>((resolve) => close(this.#fd, () => resolve()));
  }

  #flush(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      fsync(this.#fd, (error) => {
        this.#running = undefined;
        if (!error) return resolve();
        this.#failure = new Error(`fsync failed: the inbox cannot promise durability until reopened (${error.message}).`, { cause: error });
        reject(this.#failure);
      });
    });
  }
}
