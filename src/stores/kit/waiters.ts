/**
 * Claims of this process waiting for work. A store wakes one of them for each new entry (waking every idle
 * loop would send all but one back to sleep, each having looked for nothing), and all of them when more may
 * be due than it can count (a retry, a reconnection, close).
 */
import { pause } from '../../delivery/port.js';

export class Waiters {
  readonly #waiting = new Set<() => void>();

  /**
   * Resolves after `ms`, when woken, or when `signal` aborts; however it ends, its timer and its abort listener
   * go (see `pause`).
   */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    return pause(ms, signal, this.#waiting);
  }

  /** Wakes up to `count` waiters, the longest waiting first. */
  wake(count = 1): void {
    let left = count;
    for (const wake of this.#waiting) {
      if (left-- <= 0) return;
      wake();
    }
  }

  wakeAll(): void {
    for (const wake of this.#waiting) wake();
  }

  get size(): number {
    return this.#waiting.size;
  }
}
