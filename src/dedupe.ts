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
export function idempotencyKey(trigger: string, rawBody: string): string {
  return `${trigger}:${digest('sha1', rawBody, 'base64')}`;
}

export class DedupeWindow {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  /** Key → time first seen. Map order is insertion order, so the oldest entries come first. */
  readonly #seen = new Map<string, number>();

  constructor({ windowMs = 10 * 60_000, maxKeys = 10_000 }: DedupeOptions = {}) {
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
  }

  /** Records the key; returns false when it was already seen within the window. */
  add(key: string, now = Date.now()): boolean {
    this.#forgetExpired(now);
    if (this.#seen.has(key)) return false;
    this.#seen.set(key, now);
    if (this.#seen.size > this.#maxKeys) this.#seen.delete(this.#seen.keys().next().value as string);
    return true;
  }

  /** Forgets a key, so that a retry of a delivery that was not acknowledged is taken again. */
  delete(key: string): void {
    this.#seen.delete(key);
  }

  #forgetExpired(now: number): void {
    for (const [key, seenAt] of this.#seen) {
      if (now - seenAt < this.#windowMs) return;
      this.#seen.delete(key);
    }
  }
}
