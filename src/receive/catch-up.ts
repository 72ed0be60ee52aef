/**
 * The receiver's side of catching up after an outage (`createWebhooks({ catchUp })`): the interface a catch-up
 * implements, and when the receiver calls it. `catchUp(...)` from chat-webhooks/reconcile implements it; the
 * receiver knows only this interface, so neither the REST client nor reconcile is loaded into a receiver (or
 * a Lambda bundle) that does not ask for them, as with `telemetry: openTelemetry()`.
 */
import type { CoordinatingInbox } from '../delivery/port.js';
import { WebhookError } from '../dispatch/errors.js';
import type { WebhookLogger } from '../dispatch/logger.js';
import type { Telemetry } from '../telemetry/hooks.js';
import type { RedeliverOptions, Redelivery } from './redelivery.js';

/** What the receiver hands its catch-up at each call. */
export interface CatchUpContext {
  /** The receiver's inbox: durable, with the lock and marks catch-up coordinates through. */
  readonly inbox: CoordinatingInbox;
  /** The receiver's `webhooks.redeliver`: where recovered events go. */
  redeliver(body: string, options?: RedeliverOptions): Promise<Redelivery>;
  readonly telemetry: Telemetry | undefined;
  readonly logger: WebhookLogger;
  /** Aborted when the receiver closes: a run in progress stops. */
  readonly signal: AbortSignal;
}

/**
 * A catch-up: `catchUp({ chat, webhook })` from chat-webhooks/reconcile. Its calls run one after another,
 * never two at once in one receiver; a rejection reaches onError (`catch_up_failed`) and stops nothing else.
 */
export interface CatchUp {
  /** A silence between deliveries longer than this (milliseconds) is one the platform's retries did not cover. */
  readonly horizonMs: number;
  /** The receiver was created: catch up from where the store says it got to, to now. */
  start(context: CatchUpContext): Promise<void>;
  /** Deliveries resumed after a silence longer than `horizonMs`; `lastHeard` is the delivery before it (epoch ms). */
  resumed(context: CatchUpContext, lastHeard: number): Promise<void>;
  /** Deliveries flow without a gap, up to `at`: called about once per `horizonMs` while they do. */
  heard(context: CatchUpContext, at: number): Promise<void>;
}

/** Whether `value` is a CatchUp rather than the options of one. */
export function isCatchUp(value: unknown): value is CatchUp {
  const candidate = value as Partial<CatchUp> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.start === 'function' && typeof candidate.resumed === 'function' && typeof candidate.heard === 'function';
}

type ContextParts = Omit<CatchUpContext, 'signal'>;

/** Calls the receiver's catch-up: at start, then as deliveries arrive; one call at a time, each one's errors reported. */
export class CatchUpCalls {
  readonly #catchUp: CatchUp;
  readonly #context: CatchUpContext;
  readonly #abort = new AbortController();
  readonly #report: (error: WebhookError) => unknown;
  #chain: Promise<void> = Promise.resolve();
  #lastHeard = Date.now();
  #lastBeat = Date.now();

  constructor(catchUp: CatchUp, parts: ContextParts, report: (error: WebhookError) => unknown) {
    this.#catchUp = catchUp;
    this.#context = { ...parts, signal: this.#abort.signal };
    this.#report = report;
  }

  start(): void {
    this.#call('start', () => this.#catchUp.start(this.#context));
  }

  /** A delivery arrived (it passed admission): after a long silence, catch up; else, now and then, say so. */
  delivered(now = Date.now()): void {
    const lastHeard = this.#lastHeard;
    this.#lastHeard = now;
    if (now - lastHeard > this.#catchUp.horizonMs) {
      this.#lastBeat = now;
      this.#call('resumed', () => this.#catchUp.resumed(this.#context, lastHeard));
    } else if (now - this.#lastBeat >= this.#catchUp.horizonMs) {
      this.#lastBeat = now;
      this.#call('heard', () => this.#catchUp.heard(this.#context, now));
    }
  }

  /** Stops a run in progress and waits for it. */
  async close(): Promise<void> {
    this.#abort.abort(new Error('The receiver is closing.'));
    await this.#chain;
  }

  #call(what: string, run: () => Promise<void>): void {
    this.#chain = this.#chain.then(async () => {
      if (this.#abort.signal.aborted) return;
      try {
        await run();
      } catch (cause) {
        if (this.#abort.signal.aborted) return;
        const reason = cause instanceof Error ? cause.message : String(cause);
        // Not awaited: an onError handler that never settles (an alerting call that hangs) would stop every
        // later catch-up, and close(), behind it. The dispatcher's report never rejects.
        void this.#report(new WebhookError('catch_up_failed', `Catching up (${what}) failed: ${reason}`, { cause }));
      }
    });
  }
}
