/**
 * The worker loop over an Inbox: claim an entry with a lease, run its handlers, then complete it, or fail it
 * with a retry time (backoff with full jitter) or as dead after its last attempt. It knows the inbox only
 * through the port, so one loop drives every store. `createWorker` (src/delivery/worker.ts) and
 * `createWebhooks({ inbox })` (consuming in the receiving process) both run it.
 */
import { isKnownTrigger } from '../events/index.js';
import { INBOX_CHOICES, pause, type FailOutcome, type Inbox, type InboxClaim } from './port.js';
import { Dispatcher, type HandlerContext, type HandlerTransaction, type Outcome } from '../dispatch/dispatcher.js';
import { ConfigurationError, WebhookError } from '../dispatch/errors.js';
import { registrationMethods, type HandlerRegistry } from '../dispatch/handlers.js';
import { useInbox } from './inbox-users.js';
import { consoleLogger, type WebhookLogger } from '../dispatch/logger.js';
import { backoffMs } from '../platform/backoff.js';
import { retryPolicy, type DeliveryRetryOptions, type RetryPolicy } from './retry-policy.js';
import { InboxHealth, workerHealth, type WorkerHealth } from './health.js';
import { Outage } from './outage.js';
import { attemptInfo, checkTelemetry } from '../dispatch/attempts.js';
import { rejectUnknownOptions } from '../dispatch/unknown-options.js';
import type { Telemetry } from '../telemetry/hooks.js';
import { checkTransactionOption } from './transaction-option.js';

export interface WorkerOptions {
  /** Where the events wait: `memoryInbox()`, `sqliteInbox(...)`, `redisInbox(...)`, `postgresInbox(...)`. */
  inbox: Inbox;
  /** How many events run at once. Default 8. */
  concurrency?: number;
  /** Default `{ attempts: 5, minDelayMs: 1000, maxDelayMs: 300000 }`. */
  retry?: DeliveryRetryOptions;
  /**
   * How long a claimed event is this worker's before another may take it (renewed while its handlers run):
   * after a crash, the event runs again this long after it was last renewed. Default 30 000 ms.
   */
  leaseMs?: number;
  /** A handler still running after this long counts as failed (and is retried). Default 30 000 ms. */
  handlerTimeoutMs?: number;
  /** pino-compatible. Default: warnings and errors on the console. */
  logger?: WebhookLogger;
  /** Traces and metrics of every attempt: `openTelemetry()` from `chat-webhooks/otel`. See the [observability guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/observability.md). */
  telemetry?: Telemetry;
  /**
   * `close()` closes the inbox once no other receiver or worker of this process uses it, so that nothing
   * keeps the process alive after it (Redis sockets, a database pool). `false`: the inbox stays open (you
   * close it with `await inbox.close()`, and may use it after the worker closed, or start the worker again).
   * @defaultValue true
   */
  closeInbox?: boolean;
  /**
   * Runs each event's handlers inside a transaction of the inbox's database (`postgresInbox` only), given to
   * them as `context.transaction`: their writes through it commit with the event's completion, or roll back
   * together on a throw, a timeout or a crash. One connection per handler in flight. See docs/exactly-once.md.
   * @defaultValue false
   */
  transaction?: boolean;
}

/**
 * Every option of `createWorker`, for the check that refuses a misspelled one (`concurency`). A record over the
 * keys of `WorkerOptions`, so that tsc refuses to build while a new option is missing here: add it here only.
 */
export const WORKER_OPTIONS = Object.keys({
  inbox: true,
  concurrency: true,
  retry: true,
  leaseMs: true,
  handlerTimeoutMs: true,
  logger: true,
  telemetry: true,
  closeInbox: true,
  transaction: true,
} satisfies Record<keyof WorkerOptions, true>);

/** `C`: the handlers' context (with `transaction: true`, a `TransactionContext`). */
export interface Worker<C extends HandlerContext = HandlerContext> extends HandlerRegistry<C> {
  /** Starts taking events from the inbox. */
  start(): this;
  /**
   * Stops taking events, waits for the running ones to finish (or time out), then closes the inbox if no
   * other receiver or worker of this process uses it (see `closeInbox`), and resolves.
   */
  close(): Promise<void>;
  /** Whether the worker works: started, and from its latest claims and writes (see the [observability guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/observability.md#health)). */
  health(): Promise<WorkerHealth>;
}

/** How long an idle claim waits before looking again; short enough for close() to be prompt. */
const IDLE_WAIT_MS = 1000;

interface Settings {
  inbox: Inbox;
  concurrency: number;
  policy: RetryPolicy;
  leaseMs: number;
  handlerTimeoutMs: number;
  logger: WebhookLogger;
  telemetry: Telemetry | undefined;
  transaction: boolean;
}

/** A claim and how its outcome is written: through the inbox, or in the claim's transaction. */
interface Held {
  claim: InboxClaim;
  transaction?: HandlerTransaction;
  complete(): Promise<void>;
  fail(outcome: FailOutcome): Promise<void>;
}

export function checkWorkerOptions(options: Omit<WorkerOptions, 'inbox'> & { inbox?: Inbox }): void {
  const { concurrency, leaseMs, handlerTimeoutMs, inbox } = options;
  if (!inbox || typeof inbox.claim !== 'function' || typeof inbox.put !== 'function') {
    throw new ConfigurationError('inbox', `A worker needs \`inbox\`: ${INBOX_CHOICES}.`);
  }
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && concurrency >= 1)) {
    throw new ConfigurationError('concurrency', '`concurrency` must be a whole number, at least 1.');
  }
  if (leaseMs !== undefined && !(leaseMs >= 10)) {
    throw new ConfigurationError('leaseMs', '`leaseMs` must be at least 10 milliseconds.');
  }
  if (handlerTimeoutMs !== undefined && !(handlerTimeoutMs >= 0)) {
    throw new ConfigurationError('handlerTimeoutMs', '`handlerTimeoutMs` must be 0 (no limit) or a positive number.');
  }
  if (options.closeInbox !== undefined && typeof options.closeInbox !== 'boolean') {
    throw new ConfigurationError('closeInbox', '`closeInbox` must be true or false.');
  }
  checkTransactionOption(options.transaction, inbox);
  retryPolicy(options.retry);
}

/** Runs handlers for the events of an inbox. Registers handlers on `dispatcher` (a receiver shares its own). */
export class Consumer {
  readonly #settings: Settings;
  readonly #dispatcher: Dispatcher;
  /** One per loop: a signal shared by every loop would collect more abort listeners than Node's warning allows. */
  #stops: AbortController[] = [];
  #loops?: Promise<void>;
  #stopObserving: (() => void) | undefined;
  #unreserve: (() => void) | undefined;
  /** The outcome of its claims and writes; a receiver shares its own (its commits tell it too). */
  readonly health: InboxHealth;
  /** One warning when the inbox stops answering claims, one line when it is back: shared by all loops. */
  readonly #outage: Outage;

  constructor(settings: Settings, dispatcher: Dispatcher, health = new InboxHealth(settings.inbox)) {
    this.#settings = settings;
    this.#dispatcher = dispatcher;
    this.health = health;
    this.#outage = new Outage(settings.inbox.kind, settings.logger);
  }

  start(): void {
    if (this.#loops) return;
    this.#stopObserving ??= this.#settings.telemetry?.observe(this.#settings.inbox);
    // A connection ready for each loop: a handler never waits on another's transaction to get one.
    if (this.#settings.transaction) this.#unreserve ??= this.#settings.inbox.transactions!.reserve(this.#settings.concurrency);
    this.#stops = Array.from({ length: this.#settings.concurrency }, () => new AbortController());
    this.#loops = Promise.all(this.#stops.map((stop) => this.#loop(stop.signal))).then(() => undefined);
  }

  async close(): Promise<void> {
    for (const stop of this.#stops) stop.abort();
    await this.#loops;
    this.#loops = undefined;
    this.#stopObserving?.();
    this.#stopObserving = undefined;
    this.#unreserve?.();
    this.#unreserve = undefined;
  }

  async #loop(signal: AbortSignal): Promise<void> {
    const { inbox, leaseMs } = this.#settings;
    /** Claims of this loop that failed in a row: the pause before the next grows with it. */
    let streak = 0;
    while (!signal.aborted) {
      let claim: Held | undefined;
      try {
        claim = await this.#claim(signal);
        streak = 0;
        this.#outage.answered();
        // An idle claim may have only read: it says nothing of whether the inbox takes writes.
        if (claim) this.health.succeeded();
      } catch (cause) {
        if (signal.aborted) break;
        this.health.failed(cause);
        await pause(this.#outage.failed(cause, ++streak), signal);
        continue;
      }
      if (claim) await this.#run(claim);
    }
  }

  /** One claim: a lease the worker renews, or (with `transaction`) a transaction that holds the entry's lock. */
  async #claim(signal: AbortSignal): Promise<Held | undefined> {
    const { inbox, leaseMs, handlerTimeoutMs } = this.#settings;
    if (this.#settings.transaction) {
      return inbox.transactions!.claimInTransaction({ leaseMs, waitMs: IDLE_WAIT_MS, signal, timeoutMs: handlerTimeoutMs });
    }
    const claim = await inbox.claim({ leaseMs, waitMs: IDLE_WAIT_MS, signal });
    return claim && { claim, complete: () => inbox.complete(claim), fail: (outcome) => inbox.fail(claim, outcome) };
  }

  async #run(held: Held): Promise<void> {
    const { policy, telemetry, inbox } = this.#settings;
    const { claim, transaction } = held;
    const { event, rawBody, key, attempt, receivedAt } = claim;
    if (attempt > policy.attempts) return this.#buryInterrupted(held);
    const context: HandlerContext = transaction ? { key, attempt, receivedAt, transaction } : { key, attempt, receivedAt };
    // A transaction's row lock holds the entry: there is no lease to renew (and renewing would wait on that lock).
    const stopRenewing = transaction ? () => undefined : this.#renewWhileRunning(claim);
    const traced = telemetry?.attempt(inbox.kind, attemptInfo(event, claim.trigger, key, attempt, claim.traceparent));
    let outcome: Outcome;
    try {
      const known = isKnownTrigger(event.trigger);
      const run = () => this.#dispatcher.dispatch(event, known, rawBody, this.#settings.handlerTimeoutMs, context, false);
      outcome = await (traced ? traced.run(run) : run());
    } finally {
      stopRenewing();
    }
    const willRetry = attempt < policy.attempts;
    traced?.end(outcome, outcome.length === 0 || !willRetry);
    if (outcome.length === 0) return this.#store('complete', () => held.complete());

    const error = outcome.map((failure) => failure.message).join('\n');
    const retryAt = Date.now() + backoffMs(attempt, policy);
    await this.#store('fail', () => held.fail(willRetry ? { retryAt, error } : { dead: true, error }));
    for (const failure of outcome) {
      const details = { cause: failure.cause, event, rawBody, key, attempt, willRetry };
      await this.#dispatcher.report(new WebhookError(failure.code, failure.message, details));
    }
  }

  /** An event whose last attempt was cut off (its process died, its lease ran out): dead, and reported. */
  async #buryInterrupted(held: Held): Promise<void> {
    const { claim } = held;
    const { event, rawBody, key, attempt } = claim;
    const message = `The handlers of a "${event.trigger}" event were cut off on its last attempt (the process running them stopped); it is dead.`;
    this.#settings.telemetry?.dead(this.#settings.inbox.kind, claim.trigger);
    await this.#store('fail', () => held.fail({ dead: true, error: message }));
    await this.#dispatcher.report(
      new WebhookError('handler_interrupted', message, { event, rawBody, key, attempt: attempt - 1, willRetry: false }),
    );
  }

  /** Keeps the lease while handlers run, so only a dead process loses it. Returns the stop function. */
  #renewWhileRunning(claim: InboxClaim): () => void {
    const { inbox, leaseMs, logger } = this.#settings;
    const timer = setInterval(() => {
      inbox.renew(claim, leaseMs).then(
        (held) => {
          if (!held) logger.warn?.({ key: claim.key }, 'Lost the lease of a running event: another worker may run it too.');
        },
        () => undefined,
      );
    }, Math.max(5, Math.floor(leaseMs / 3)));
    timer.unref?.();
    return () => clearInterval(timer);
  }

  /** An inbox write after the handlers ran; if it fails, the lease runs out and the event runs again. */
  async #store(what: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
      this.health.succeeded();
    } catch (cause) {
      this.health.failed(cause);
      this.#settings.logger.error?.({ reason: String(cause) }, `Could not ${what} an event in the inbox; it will run again.`);
    }
  }
}

export function consumerSettings(options: WorkerOptions): Settings {
  checkWorkerOptions(options);
  return {
    inbox: options.inbox,
    concurrency: options.concurrency ?? 8,
    policy: retryPolicy(options.retry),
    leaseMs: options.leaseMs ?? 30_000,
    handlerTimeoutMs: options.handlerTimeoutMs ?? 30_000,
    // A receiver's in-process worker gets the receiver's logger in `options`.
    logger: options.logger ?? consoleLogger,
    telemetry: checkTelemetry(options.telemetry),
    transaction: options.transaction === true,
  };
}

/** A worker of its own: handlers registered on it run for the inbox's events once started. */
export function createConsumer<C extends HandlerContext = HandlerContext>(options: WorkerOptions): Worker<C> {
  rejectUnknownOptions('createWorker', options, WORKER_OPTIONS);
  const settings = consumerSettings(options);
  const dispatcher = new Dispatcher({ handlerTimeoutMs: settings.handlerTimeoutMs, logger: settings.logger });
  const consumer = new Consumer(settings, dispatcher);
  const release = useInbox(options.inbox, options.closeInbox);
  let closing = false;
  let started = false;
  return {
    ...registrationMethods<Worker<C>>(dispatcher),
    start() {
      started = true;
      consumer.start();
      return this;
    },
    async close() {
      closing = true;
      await consumer.close();
      await release();
    },
    health: async () => workerHealth(await consumer.health.health(closing), started),
  };
}
