/**
 * Remembers the idempotency keys of recent deliveries: the service can deliver the same event more than once.
 */
import { digest } from './digest.js';

export interface DedupeOptions {
  /** How long a delivery is remembered, in milliseconds. Default 10 minutes. */
  windowMs?: number;
  /** How many deliveries are remembered at most; the oldest are forgotten first. Default 10 000. */
  maxKeys?: number;
}

/**
 * The idempotency key of a delivery: a digest of its exact body. The platform sends no delivery id, and a key
 * built from chosen fields could merge two different events; identical bytes are the same delivery.
 */
export function idempotencyKey(trigger: string, rawBody: string | Uint8Array): string {
  return `${trigger}:${digest('sha1', rawBody, 'base64')}`;
}

export class DedupeWindow {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  /** Key → time first seen, for membership. */
  readonly #seen = new Map<string, number>();
  /**
   * The same keys oldest first, as a ring. Finding the oldest in the Map itself would mean iterating it
   * from the start, past the holes its deletions leave, which grows with the window on every request.
   */
  readonly #order: (string | undefined)[];
  readonly #times: number[];
  #oldest = 0;
  #count = 0;

  constructor({ windowMs = 10 * 60_000, maxKeys = 10_000 }: DedupeOptions = {}) {
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
    this.#order = new Array(maxKeys);
    this.#times = new Array(maxKeys).fill(0);
  }

  /** Records the key; returns false when it was already seen within the window. */
  add(key: string, now = Date.now()): boolean {
    this.#forgetExpired(now);
    if (this.#seen.has(key)) return false;
    if (this.#count === this.#maxKeys) this.#forgetOldest();
    const slot = (this.#oldest + this.#count) % this.#maxKeys;
    this.#order[slot] = key;
    this.#times[slot] = now;
    this.#count++;
    this.#seen.set(key, now);
    return true;
  }

  /** Forgets a key, so that a retry of a delivery that was not acknowledged is taken again. */
  delete(key: string): void {
    // Its slot in the ring stays until its turn comes (see #forgetOldest).
    this.#seen.delete(key);
  }

  #forgetOldest(): void {
    const key = this.#order[this.#oldest] as string;
    // A key deleted and added again since has a newer slot: only the entry made by this slot is forgotten.
    if (this.#seen.get(key) === this.#times[this.#oldest]) this.#seen.delete(key);
    this.#order[this.#oldest] = undefined;
    this.#oldest = (this.#oldest + 1) % this.#maxKeys;
    this.#count--;
  }

  #forgetExpired(now: number): void {
    while (this.#count > 0 && now - (this.#times[this.#oldest] as number) >= this.#windowMs) this.#forgetOldest();
  }
}
