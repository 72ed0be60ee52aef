/**
 * Runs handlers for an event, each isolated: one that throws, rejects or overruns its time does not stop the
 * others, and every failure reaches the error handlers with the event and its raw body.
 */
import { isKnownTrigger, triggers, type ParsedWebhook } from '../events/index.js';
import { ConfigurationError, describeCause as describe, WebhookError } from './errors.js';
import type { WebhookLogger } from './logger.js';
import { didYouMean } from '../text/suggest.js';

/** Listener keys beside the trigger ids. Symbols, so no trigger id can collide with them. */
export const ANY = Symbol('any');
export const UNKNOWN = Symbol('unknown');

/** What a handler learns beside the event. */
export interface HandlerContext {
  /** The event's idempotency key: make your own side effects idempotent by it. */
  readonly key: string;
  /** 1 on the first run; a retry after a failure, a timeout or a crash adds one. */
  readonly attempt: number;
  /** When the delivery was received, in milliseconds since the epoch. */
  readonly receivedAt: number;
  /**
   * `'reconcile'` when the event was not delivered by the platform but rebuilt from its list of messages
   * (chat-webhooks/reconcile) and run by the receiver that reconciled; absent for a delivery. A worker reading
   * an inbox does not know where a stored event came from.
   */
  readonly source?: 'reconcile';
  /**
   * Only with `transaction: true` (a worker on `postgresInbox`): an open transaction on the inbox's database.
   * What the handler writes through it commits with the event's completion, or not at all. See
   * docs/exactly-once.md.
   */
  readonly transaction?: HandlerTransaction;
}

/**
 * A transaction a handler writes through: node-postgres's `query(text, values)`. It is the worker's, not the
 * handler's: the worker commits it (with the completion) or rolls it back, so a handler never sends BEGIN,
 * COMMIT or ROLLBACK itself.
 */
export interface HandlerTransaction {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** The context of a worker's handlers with `transaction: true`: its `transaction` is always there. */
export interface TransactionContext extends HandlerContext {
  readonly transaction: HandlerTransaction;
}

export type AnyHandler = (event: ParsedWebhook, context: HandlerContext) => unknown;
export type ErrorHandler = (error: WebhookError) => unknown;

export interface DispatcherOptions {
  /** A handler's promise that has not settled after this many milliseconds is reported as `handler_timeout`. */
  handlerTimeoutMs: number;
  logger: WebhookLogger;
}

type Listener = AnyHandler;

export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

const describeValue = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value);

/** The error for a trigger name this version does not know, naming the closest known ones. */
export function unknownTrigger(name: string): ConfigurationError {
  return new ConfigurationError(
    'trigger',
    `Unknown trigger "${name}".${didYouMean(name, triggers)} Deliveries of triggers this version does not know go to onUnknown.`,
  );
}

/** A handler must be a function: said here, not as a TypeError at some later call. */
function checkHandler(call: string, handler: unknown): void {
  if (typeof handler !== 'function') {
    throw new ConfigurationError('handler', `${call} needs a function as its handler, got ${describeValue(handler)}.`);
  }
}

/**
 * Handlers per key, each list replaced (never changed in place) when a handler is added or removed: a dispatch
 * runs the list it read even if a handler changes the registrations meanwhile, without copying it per event.
 */
class Listeners {
  readonly #lists = new Map<string | symbol, readonly Listener[]>();

  get(key: string | symbol): readonly Listener[] {
    return this.#lists.get(key) ?? NO_LISTENERS;
  }

  add(key: string | symbol, listener: Listener): void {
    this.#lists.set(key, [...this.get(key), listener]);
  }

  /** Removes every registration of the listener under the key. */
  remove(key: string | symbol, listener: Listener): void {
    const list = this.get(key).filter((each) => each !== listener);
    if (list.length > 0) this.#lists.set(key, list);
    else this.#lists.delete(key);
  }

  keys(): (string | symbol)[] {
    return [...this.#lists.keys()];
  }
}

const NO_LISTENERS: readonly Listener[] = Object.freeze([]);

export class Dispatcher {
  readonly #listeners = new Listeners();
  readonly #errorHandlers = new Set<ErrorHandler>();
  readonly #options: DispatcherOptions;

  constructor(options: DispatcherOptions) {
    this.#options = options;
  }

  /** `method` names the call in the error a missing handler gets (`onAny`). */
  on(key: string | symbol, handler: AnyHandler, method: string): void {
    checkHandler(method, handler);
    this.#listeners.add(key, handler);
  }

  /** Registers a handler for known triggers; an unknown name is a mistake in the code, thrown at once. */
  onTriggers(trigger: string | readonly string[], handler: AnyHandler): void {
    const names: readonly unknown[] = Array.isArray(trigger) ? trigger : [trigger];
    for (const name of names) {
      if (typeof name !== 'string') {
        throw new ConfigurationError('trigger', `on() takes a trigger name or a list of them first, got ${describeValue(name)}.`);
      }
      if (!isKnownTrigger(name)) throw unknownTrigger(name);
    }
    checkHandler(`on(${JSON.stringify(names.length === 1 ? names[0] : names)}, handler)`, handler);
    for (const name of names as string[]) this.#listeners.add(name, handler);
  }

  /** Removes a handler from some triggers, or (given only the handler) from everything it was registered for. */
  offTriggers(triggerOrHandler: unknown, handler?: unknown): void {
    if (typeof triggerOrHandler === 'function') {
      this.offEverywhere(triggerOrHandler as AnyHandler);
      return;
    }
    const names = typeof triggerOrHandler === 'string' ? [triggerOrHandler] : (triggerOrHandler as string[]);
    for (const name of names) this.#listeners.remove(name, handler as AnyHandler);
  }

  onError(handler: ErrorHandler): void {
    checkHandler('onError', handler);
    this.#errorHandlers.add(handler);
  }

  /** Removes a handler from every trigger, onAny, onUnknown and onError. */
  offEverywhere(handler: AnyHandler | ErrorHandler): void {
    for (const key of this.#listeners.keys()) this.#listeners.remove(key, handler as AnyHandler);
    this.#errorHandlers.delete(handler as ErrorHandler);
  }

  /**
   * Runs every handler for the event and returns the outcome: the failures, empty when every handler
   * succeeded. Synchronous handlers that all succeed give `NO_FAILURES` at once (sparing a promise per
   * event); otherwise a promise that settles once every handler has. Never rejects. With `report` (the
   * default), each failure also reaches the error handlers, and the outcome waits for them; without it the
   * caller reports (the worker adds `attempt` and `willRetry` first).
   */
  dispatch(
    event: ParsedWebhook,
    known: boolean,
    rawBody?: string,
    timeoutMs = this.#options.handlerTimeoutMs,
    context?: HandlerContext,
    report = true,
  ): Outcome | Promise<Outcome> {
    const own = this.#listeners.get(known ? event.trigger : UNKNOWN);
    const any = this.#listeners.get(ANY);
    const listeners = any.length === 0 ? own : own.concat(any);
    if (!known && listeners.length === 0) {
      this.#options.logger.warn?.(
        { trigger: event.trigger },
        'Received a trigger this version does not know and no onUnknown/onAny handler is registered.',
      );
    }
    // What a dispatch must keep (failures, promises to wait for) is made only once a handler fails or is
    // asynchronous: an event whose handlers all succeed synchronously costs no allocation here.
    let run: DispatchRun | undefined;
    for (let i = 0; i < listeners.length; i++) {
      let result: unknown;
      try {
        result = (listeners[i] as Listener)(event, context as HandlerContext);
      } catch (cause) {
        (run ??= new DispatchRun(this, report)).failed(handlerFailed(event, rawBody, cause, context));
        continue;
      }
      if (isThenable(result)) {
        run ??= new DispatchRun(this, report);
        run.pending.push(this.#watch(result, event, rawBody, timeoutMs, context, run));
      }
    }
    return run ? run.outcome() : NO_FAILURES;
  }

  /**
   * Hands an error to every error handler (or the logger when there is none). Returns a promise only when
   * some handler is asynchronous. Never rejects.
   */
  report(error: WebhookError): Promise<void> | undefined {
    const { logger } = this.#options;
    const fields = { code: error.code, trigger: (error.event as { trigger?: unknown } | undefined)?.trigger };
    if (this.#errorHandlers.size === 0) {
      logger.error?.(fields, `${error.message} (register webhooks.onError to handle this)`);
      return undefined;
    }
    let pending: Promise<void>[] | undefined;
    for (const handler of this.#errorHandlers) {
      const failed = (cause: unknown) =>
        logger.error?.({ ...fields, reason: describe(cause) }, 'An onError handler itself failed.');
      try {
        const result = handler(error);
        if (isThenable(result)) (pending ??= []).push(Promise.resolve(result).then(() => undefined, failed));
      } catch (cause) {
        failed(cause);
      }
    }
    return pending && Promise.all(pending).then(() => undefined);
  }

  /** Waits for an asynchronous handler, up to the timeout; a failure goes to the run. */
  #watch(
    result: PromiseLike<unknown>,
    event: ParsedWebhook,
    rawBody: string | undefined,
    timeoutMs: number,
    context: HandlerContext | undefined,
    run: DispatchRun,
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const timer =
        timeoutMs > 0 && timeoutMs !== Infinity
          ? setTimeout(() => {
              settled = true;
              run.failed(
                new WebhookError('handler_timeout', `A handler for "${event.trigger}" did not finish within ${timeoutMs} ms.`, {
                  event,
                  rawBody,
                  ...keyOf(context),
                }),
              );
              resolve();
            }, timeoutMs)
          : undefined;
      // The timer must not keep a process alive that is otherwise done.
      (timer as { unref?: () => void } | undefined)?.unref?.();
      result.then(
        // After the timeout, clearing the fired timer and resolving again do nothing.
        () => {
          clearTimeout(timer);
          resolve();
        },
        (cause: unknown) => {
          if (settled) return;
          clearTimeout(timer);
          run.failed(handlerFailed(event, rawBody, cause, context));
          resolve();
        },
      );
    });
  }
}

/** One dispatch with a failure or an asynchronous handler: its failures, and what it must wait for. */
class DispatchRun {
  failures: WebhookError[] | undefined;
  readonly pending: Promise<unknown>[] = [];

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly report: boolean,
  ) {}

  failed(error: WebhookError): void {
    (this.failures ??= []).push(error);
    if (!this.report) return;
    const reporting = this.dispatcher.report(error);
    if (reporting) this.pending.push(reporting);
  }

  outcome(): Outcome | Promise<Outcome> {
    if (this.pending.length === 0) return this.failures ?? NO_FAILURES;
    return settleAll(this.pending, () => this.failures ?? NO_FAILURES);
  }
}

/** The failures of one dispatch; empty when every handler succeeded. */
export type Outcome = readonly WebhookError[];
export const NO_FAILURES: Outcome = Object.freeze([]);

/** A stored event's key and, where its runner counts them (a queue consumer's receive count), its attempt. */
function keyOf(context: HandlerContext | undefined): { key?: string; attempt?: number } {
  return context ? { key: context.key, attempt: context.attempt } : {};
}

function handlerFailed(event: ParsedWebhook, rawBody: string | undefined, cause: unknown, context?: HandlerContext): WebhookError {
  return new WebhookError('handler_failed', `A handler for "${event.trigger}" failed: ${describe(cause)}`, {
    cause,
    event,
    rawBody,
    ...keyOf(context),
  });
}

/** Waits for every promise (reports included, which a failure may add while others run), then maps. */
function settleAll<T>(pending: Promise<unknown>[], then: () => T): Promise<T> {
  const waited = pending.length;
  return Promise.all(pending).then(() => (pending.length > waited ? settleAll(pending, then) : then()));
}
