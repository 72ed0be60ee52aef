/**
 * `health()` of a receiver or a worker: what it already knows of its inbox (the outcome of the latest put,
 * claim or write), so that a readiness probe every second costs nothing on the request path. When nothing
 * told it for a quarter of a second (no traffic), it asks the inbox itself, where the inbox can be asked cheaply
 * (`ping`: a Redis PING, an empty SQLite write transaction), one question at a time.
 */
import type { Inbox } from './port.js';
import { describeCause } from '../dispatch/errors.js';

export interface Health {
  /** Ready to take deliveries: not closing, and the inbox (if any) is not failing. */
  ok: boolean;
  /** `none` without an inbox; `failing` while its latest operation failed (or its ping did not answer). */
  inbox: 'ok' | 'failing' | 'none';
  /** `close()` was called: a load balancer should stop sending requests here. */
  closing: boolean;
  /** Why the inbox is failing (the latest error's message; never a body or a credential). */
  lastError?: string;
}

/** `health()` of a worker (`createWorker`): its inbox's, as a receiver's, and whether it was started. */
export interface WorkerHealth extends Health {
  /**
   * `not_started` until `start()` is called: the worker takes no events, so `ok` is false whatever the inbox
   * says (a forgotten `start()` would otherwise look healthy while nothing runs).
   */
  worker: 'started' | 'not_started';
}

/** A worker's health from its inbox's: not ok until started. */
export function workerHealth(health: Health, started: boolean): WorkerHealth {
  return { ...health, ok: health.ok && started, worker: started ? 'started' : 'not_started' };
}

/**
 * What is known is trusted this long; after it, `health()` pings the inbox (where it can). With the ping's
 * timeout, an inbox that stopped taking writes shows as failing within 0.75 s of a probe asking.
 */
const FRESH_MS = 250;
/** A ping that has not answered after this long counts as failing (a Redis down queues commands). */
const PING_TIMEOUT_MS = 500;

export class InboxHealth {
  #failing = false;
  #lastError: string | undefined;
  #at = 0;
  #ping: Promise<void> | undefined;

  constructor(private readonly inbox: Inbox | undefined) {}

  /** An operation on the inbox succeeded. */
  succeeded(): void {
    this.#failing = false;
    this.#at = Date.now();
  }

  /** An operation on the inbox failed. */
  failed(cause: unknown): void {
    this.#failing = true;
    this.#lastError = describeCause(cause);
    this.#at = Date.now();
  }

  async health(closing: boolean): Promise<Health> {
    if (!this.inbox) return { ok: !closing, inbox: 'none', closing };
    if (Date.now() - this.#at >= FRESH_MS && this.inbox.ping) await (this.#ping ??= this.#pinged(this.inbox.ping.bind(this.inbox)));
    const failing = this.#failing;
    return { ok: !closing && !failing, inbox: failing ? 'failing' : 'ok', closing, ...(failing && this.#lastError ? { lastError: this.#lastError } : {}) };
  }

  async #pinged(ping: () => Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`The ${this.inbox?.kind} inbox did not answer within ${PING_TIMEOUT_MS} ms.`)), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([ping(), late]);
      this.succeeded();
    } catch (cause) {
      this.failed(cause);
    } finally {
      clearTimeout(timer);
      this.#ping = undefined;
    }
  }
}
