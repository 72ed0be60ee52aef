/**
 * The responses the receiver gives, and the work each one leaves behind: a refusal's report to onError, an
 * accepted event's handlers. Status decisions are made by admission and intake; this is how they are said.
 */
import type { ParsedWebhook } from '../../events/index.js';
import { isThenable, type Dispatcher, type HandlerContext, type Outcome } from '../../dispatch/dispatcher.js';
import { answeredWith, describeCause, WebhookError } from '../../dispatch/errors.js';
import type { WebhookResponse } from '../http.js';
import { ErrandResponse, type InFlight, type StartWork } from './in-flight.js';
import type { WebhookLogger } from '../../dispatch/logger.js';
import type { Delivery } from '../parse/parse.js';
import type { RequestTelemetry } from '../../telemetry/hooks.js';
import type { Refusal } from './traced.js';

export const RESOLVED = Promise.resolve();
/** Shared by every response that adds no header of its own: adapters only read response headers. */
export const TEXT: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'text/plain; charset=utf-8' });
export const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Basic realm="webhooks"', connection: 'close' };
export const RETRY_LATER = { 'retry-after': '5' };
/** For refusals made before the body was read: closing spares draining a body nobody will use. */
export const CLOSE = { connection: 'close' };
/** The answer to a repeat or a queued event: nothing runs after it. */
export const OK: WebhookResponse = Object.freeze({ status: 200, headers: TEXT, body: 'OK', done: RESOLVED });

/** What onDuplicate handlers learn about a repeated delivery. */
export interface DuplicateContext {
  key: string;
  receivedAt: number;
}

export type DuplicateHandler = (event: ParsedWebhook, context: DuplicateContext) => unknown;

/** How a receiver computes an event's key from the event and, where it has it, the body as received. */
export type KeyOf = (event: ParsedWebhook, rawBody?: string | Uint8Array) => string;

/**
 * A context whose key is computed only if a handler reads it: the fast path does not pay for a digest. It
 * holds what the key is made of rather than a closure over it: one object less per event.
 */
export class FirstRunContext implements HandlerContext {
  readonly attempt = 1;
  readonly receivedAt: number;
  #key: string | undefined;
  // Private fields: a handler that spreads its context sees attempt, key and receivedAt only.
  readonly #keyOf: KeyOf;
  readonly #event: ParsedWebhook;
  readonly #content: string | Uint8Array | undefined;

  constructor(keyOf: KeyOf, event: ParsedWebhook, content: string | Uint8Array | undefined, receivedAt: number, key?: string) {
    this.#keyOf = keyOf;
    this.#event = event;
    this.#content = content;
    this.receivedAt = receivedAt;
    this.#key = key;
  }

  get key(): string {
    return (this.#key ??= this.#keyOf(this.#event, this.#content));
  }
}

/** The context of an event rebuilt by reconcile: as a first run's, and saying where the event came from. */
class ReconciledContext extends FirstRunContext {
  readonly source = 'reconcile' as const;
}

/** A dispatch's outcome as errand work: nothing to wait for when it finished synchronously. */
export function settled(outcome: Outcome | Promise<Outcome>): Promise<void> | undefined {
  return isThenable(outcome) ? (outcome as Promise<Outcome>).then(() => undefined) : undefined;
}

/** A response with nothing to do after it. */
export function reply(status: number, body: string, headers?: Record<string, string>): WebhookResponse {
  return { status, headers: headers ? { ...TEXT, ...headers } : TEXT, body, done: RESOLVED };
}

/**
 * The handlers' run inside the request's telemetry. A function of its own: a closure in `accept`'s work would
 * make every request's work allocate its variables on the heap, telemetry or not.
 */
function tracedDispatch(
  trace: RequestTelemetry,
  dispatcher: Dispatcher,
  event: ParsedWebhook,
  known: boolean,
  rawBody: string,
  timeoutMs: number | undefined,
  context: HandlerContext,
): Outcome | Promise<Outcome> {
  return trace.handlers(event.trigger, () => dispatcher.dispatch(event, known, rawBody, timeoutMs, context));
}

/** A refusal: its `code` is the WebhookError's, for telemetry's `error.type`. */
class RefusalResponse extends ErrandResponse implements Refusal {
  constructor(
    status: number,
    headers: Readonly<Record<string, string>>,
    body: string,
    work: () => Promise<void> | undefined,
    inFlight: InFlight,
    readonly code: string,
  ) {
    super(status, headers, body, undefined, work, inFlight);
  }
}

export class Answers {
  /** onDuplicate's handlers. */
  readonly duplicateHandlers = new Set<DuplicateHandler>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly inFlight: InFlight,
    private readonly logger: WebhookLogger,
    private readonly maxBodyBytes: number,
    private readonly keyOf: KeyOf,
  ) {}

  /**
   * Hands an answer to the adapter once it is known (a failure on the way is still answered, 500), then starts
   * the work after it (`start`): even when `send` throws, an acknowledged event's handlers run.
   */
  deliver(answer: WebhookResponse | Promise<WebhookResponse>, send: (response: WebhookResponse) => void, start: StartWork): void {
    if (isThenable(answer)) {
      (answer as Promise<WebhookResponse>).then(
        (response) => sendThenStart(response, send, start),
        (cause: unknown) => sendThenStart(this.failed(cause), send, start),
      );
    } else sendThenStart(answer as WebhookResponse, send, start);
  }

  /** Answers a refused request; the error reaches onError after the response. */
  refuse(error: WebhookError, headers?: Record<string, string>, body = error.message): WebhookResponse {
    this.logger.debug?.({ code: error.code, status: error.status }, `Refused a webhook request: ${error.message}`);
    const work = () => this.dispatcher.report(error);
    return new RefusalResponse(error.status ?? 400, headers ? { ...TEXT, ...headers } : TEXT, body, work, this.inFlight, error.code);
  }

  /**
   * An invalid payload in `reject` mode. The answer names the (known) trigger only: the issues' paths can hold
   * keys the sender chose, which onError gets with the error.
   */
  rejectPayload(error: WebhookError, trigger: string): WebhookResponse {
    return this.refuse(error, undefined, `The ${trigger} payload does not match its schema; onError has the details.`);
  }

  tooLarge(): WebhookResponse {
    return this.refuse(new WebhookError('payload_too_large', `The body exceeds ${this.maxBodyBytes} bytes.`), CLOSE);
  }

  /** Once close() was called: the sender retries later, elsewhere or after the restart. */
  shuttingDown(): WebhookResponse {
    return reply(503, 'The receiver is shutting down; retry later.', { ...RETRY_LATER, ...CLOSE });
  }

  /** A body that did not arrive in time: the socket is closed rather than left to trickle on. */
  bodyTimedOut(timeoutMs: number): WebhookResponse {
    return this.refuse(new WebhookError('body_timeout', `The body did not arrive within ${timeoutMs} ms.`), CLOSE);
  }

  unreadable(cause: unknown): WebhookResponse {
    // A reader that knows why it failed says so (a host that lost the body: `body_unavailable`, 500); a stream
    // that broke is the sender's.
    if (cause instanceof WebhookError) return this.refuse(cause);
    return this.refuse(new WebhookError('invalid_json', 'The request body could not be read.', { cause }));
  }

  /** Anything unforeseen is still answered, never with a stack trace. */
  failed(cause: unknown): WebhookResponse {
    this.logger.error?.({ reason: describeCause(cause) }, 'Unexpected failure while handling a webhook request.');
    return reply(500, 'Internal error.');
  }

  /** Acknowledges an event and runs its handlers (or onError, for an accepted invalid payload) afterwards. */
  accept(
    delivery: Delivery,
    event: ParsedWebhook,
    timeoutMs: number | undefined,
    receivedAt: number,
    trace?: RequestTelemetry,
    source?: 'reconcile',
  ): WebhookResponse {
    const { error } = delivery;
    if (error) {
      // Answered 200 (the platform would resend a 400 that can never pass): onError hears the status sent.
      const accepted = answeredWith(error, 200);
      return new ErrandResponse(200, TEXT, 'OK', event, () => this.dispatcher.report(accepted), this.inFlight);
    }
    return new Accepted(event, delivery, timeoutMs, receivedAt, this.dispatcher, this.keyOf, this.inFlight, trace, source);
  }

  /** Answers a repeat 200, no handler runs; onDuplicate's handlers run after the response. */
  duplicate(event: ParsedWebhook, keyOf: () => string, receivedAt: number): WebhookResponse {
    if (this.logger.debug) this.logger.debug({ trigger: event.trigger, key: keyOf() }, 'Ignored a repeated delivery.');
    if (this.duplicateHandlers.size === 0) return OK;
    const context: DuplicateContext = { key: keyOf(), receivedAt };
    return new ErrandResponse(200, TEXT, 'OK', event, () => this.runDuplicateHandlers(event, context), this.inFlight);
  }

  /** Repeats with onDuplicate handlers are rare: one promise per handler keeps this to a single path. */
  runDuplicateHandlers(event: ParsedWebhook, context: DuplicateContext): Promise<void> {
    const failed = (cause: unknown) =>
      this.dispatcher.report(new WebhookError('handler_failed', `An onDuplicate handler failed: ${describeCause(cause)}`, { cause, event }));
    const runs = Array.from(this.duplicateHandlers, (handler) => {
      try {
        return Promise.resolve(handler(event, context)).then(undefined, failed);
      } catch (cause) {
        return failed(cause);
      }
    });
    return Promise.all(runs).then(() => undefined);
  }
}

/** Sends the response, then starts the work it leaves (an acknowledged event's handlers, a refusal's report). */
function sendThenStart(response: WebhookResponse, send: (response: WebhookResponse) => void, start: StartWork): void {
  try {
    send(response);
  } finally {
    if (response instanceof ErrandResponse) start(response);
  }
}

/** An acknowledged event, whose work is running its handlers: one object per event, no closure. */
class Accepted extends ErrandResponse {
  constructor(
    event: ParsedWebhook,
    private readonly delivery: Delivery,
    private readonly timeoutMs: number | undefined,
    private readonly receivedAt: number,
    private readonly dispatcher: Dispatcher,
    private readonly keyOf: KeyOf,
    inFlight: InFlight,
    private readonly trace: RequestTelemetry | undefined,
    private readonly source: 'reconcile' | undefined,
  ) {
    super(200, TEXT, 'OK', event, undefined, inFlight);
  }

  protected override run(): Promise<void> | undefined {
    const { delivery, event } = this;
    const content = delivery.bytes ?? delivery.rawBody;
    // Each class named at its own `new`: a constructor chosen at run time is not inlined (a generic construct
    // stub, ~500 instructions a request at 50 connections).
    const context =
      this.source === undefined
        ? new FirstRunContext(this.keyOf, event as ParsedWebhook, content, this.receivedAt)
        : new ReconciledContext(this.keyOf, event as ParsedWebhook, content, this.receivedAt);
    if (this.trace !== undefined) {
      return settled(tracedDispatch(this.trace, this.dispatcher, event as ParsedWebhook, delivery.known, delivery.rawBody, this.timeoutMs, context));
    }
    return settled(this.dispatcher.dispatch(event as ParsedWebhook, delivery.known, delivery.rawBody, this.timeoutMs, context));
  }
}
