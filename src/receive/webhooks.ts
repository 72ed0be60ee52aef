/**
 * The receiver: `createWebhooks(options)` wires the named parts together (options, admission checks,
 * intake, in-flight tracking, dispatch) behind the `Webhooks` interface. It answers normalized requests
 * following the status table of docs/design.md.
 */
import type { ParsedWebhook } from '../events/index.js';
import { isKnownTrigger } from '../events/index.js';
import { Admission } from './intake/admission.js';
import { Answers, FirstRunContext, type DuplicateContext } from './intake/answers.js';
import { AppBinding } from './auth/auth.js';
import { Consumer, consumerSettings } from '../delivery/consume.js';
import { Dispatcher, isThenable, type HandlerContext, type Outcome } from '../dispatch/dispatcher.js';
import { WebhookError } from '../dispatch/errors.js';
import { registrationMethods, type HandlerRegistry } from '../dispatch/handlers.js';
import type { WebhookLogger } from '../dispatch/logger.js';
import type { Inbox } from '../delivery/port.js';
import type { WebhookRequest, WebhookResponse } from './http.js';
import { defer, drain, Errand, InFlight, startNow, type StartWork } from './intake/in-flight.js';
import { useInbox } from '../delivery/inbox-users.js';
import { Intake, type HandleOptions } from './intake/intake.js';
import { settingsOf, type Settings, type WebhooksOptions } from './options.js';
import type { Health } from '../delivery/health.js';
import type { AttemptTelemetry, Telemetry } from '../telemetry/hooks.js';
import { traced } from './intake/traced.js';
import { attemptInfo } from '../dispatch/attempts.js';
import { redeliverer, type RedeliverOptions, type Redelivery } from './redeliver.js';
import { CatchUpCalls } from './catch-up.js';
import type { CoordinatingInbox } from '../delivery/port.js';

export type { DuplicateContext } from './intake/answers.js';
export type { HandleOptions } from './intake/intake.js';
export type { WebhooksOptions } from './options.js';
export type { Health } from '../delivery/health.js';
export type { RedeliverOptions, Redelivery } from './redeliver.js';
export type { CatchUp, CatchUpContext } from './catch-up.js';

export interface CloseOptions {
  /**
   * How long to wait for handlers already running; those still running then are reported to onError.
   * @defaultValue 10000
   */
  timeoutMs?: number;
}

export interface CloseResult {
  /** Events whose handlers finished in time. */
  drained: number;
  /** Events whose handlers were still running at the deadline; each was reported to onError. */
  abandoned: number;
}

/** How the handlers of one event went: `failures` is empty when every handler succeeded. */
export interface ReceiveOutcome {
  ok: boolean;
  failures: readonly WebhookError[];
}

/** What `receive` knows of a queued event: the handler context's fields, and where the event came from. */
export interface ReceiveContext extends Partial<HandlerContext> {
  /**
   * The W3C `traceparent` stored with the message (the receiver's commit span, when it had `telemetry`): with
   * `telemetry`, the handlers run in a CONSUMER span linked to it, as a worker's attempt does.
   */
  traceparent?: string;
  /** The queue the event came from: the consumer span's name (`process sqs`) and `messaging.destination.name`. @defaultValue 'queue' */
  queue?: string;
}

export interface Webhooks extends HandlerRegistry {
  /** Called for each repeated delivery answered 200 without running handlers (the inbox's or the dedupe window's). */
  onDuplicate(handler: (event: ParsedWebhook, context: DuplicateContext) => unknown): this;
  /**
   * Dispatches an already-parsed event (from a queue, say); resolves once its handlers have, with the
   * failures, so a queue consumer can retry the event: `if (!(await webhooks.receive(event)).ok) throw ...`.
   * `rawBody`, the body as received, goes to onError with each failure (as for a delivery).
   */
  receive(event: ParsedWebhook, context?: ReceiveContext, rawBody?: string): Promise<ReceiveOutcome>;
  /**
   * Hands a failure found outside the receiver (a queued record that cannot be parsed, say) to the onError
   * handlers; resolves once they ran. For queue consumers such as `sqsHandler`.
   */
  report(error: WebhookError): Promise<void>;
  /**
   * Runs the onDuplicate handlers for a repeat recognised outside the receiver (by a queue consumer's
   * idempotency store, say); resolves once they ran.
   */
  reportDuplicate(event: ParsedWebhook, context: DuplicateContext): Promise<void>;
  /**
   * Takes a body the platform never delivered (chat-webhooks/reconcile rebuilds them) as a delivery after its
   * HTTP checks: validation, the key, the inbox or the in-memory window, onDuplicate, the handlers (with
   * `context.source`). Resolves once that work is over, with what became of it.
   */
  redeliver(body: string, options?: RedeliverOptions): Promise<Redelivery>;
  /** Answers a normalized request; the response comes before the handlers run (see `done`). */
  handle(request: WebhookRequest, options?: HandleOptions): Promise<WebhookResponse>;
  /**
   * `handle` for adapters on a hot path: the response goes to `send`, synchronously once the body is in
   * memory unless an `enqueue` or inbox must be awaited. `send` is called exactly once, and should have
   * written the response when it returns: the handlers (or onError's report of a refusal) start right after.
   */
  respond(request: WebhookRequest, send: (response: WebhookResponse) => void, options?: HandleOptions): void;
  /**
   * Stops taking requests (503), stops the in-process worker, waits for running handlers up to a deadline,
   * then closes the inbox if no other receiver or worker of this process uses it (see `closeInbox`).
   */
  close(options?: CloseOptions): Promise<CloseResult>;
  /**
   * Whether this receiver should get traffic: not closing, and its inbox (if any) takes writes, as its latest
   * commits and claims said (or a ping, after a quiet second). Cheap enough for a readiness probe every second.
   */
  health(): Promise<Health>;
  /** The body size limit adapters enforce while reading. */
  readonly maxBodyBytes: number;
}

const NO_OPTIONS: HandleOptions = {};

/**
 * Creates a receiver; a mistake in the options throws a `ConfigurationError` here.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.data.text));
 * webhooks.onError((error) => console.error(error.code, error.message));
 * ```
 */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const settings = settingsOf(options);
  const { logger, maxBodyBytes, telemetry } = settings;
  const dispatcher = new Dispatcher({ handlerTimeoutMs: settings.handlerTimeoutMs, logger });
  const inFlight = new InFlight();
  const answers = new Answers(dispatcher, inFlight, logger, maxBodyBytes, settings.keyOf);
  const admission = new Admission(settings, answers, inFlight);
  const intake = new Intake(settings, answers, inFlight);
  // With an inbox (and `consume` on), a worker in this process runs the handlers for what was stored.
  const consumer = settings.worker && new Consumer(consumerSettings(settings.worker), dispatcher, intake.health);
  consumer?.start();
  const releaseInbox = settings.inbox ? useInbox(settings.inbox, settings.closeInbox) : undefined;
  // A receiver that only stores (`consume: false`) still has its inbox's gauges.
  const stopObserving = !consumer && settings.inbox ? telemetry?.observe(settings.inbox) : undefined;
  const redeliver = redeliverer(intake, answers, settings.inbox !== undefined);
  const catchUp = catchUpCalls(settings, redeliver, dispatcher);
  catchUp?.start();

  /** Answers through `send`; the work after the response (handlers, onError reports) begins with `start`. */
  function answer(request: WebhookRequest, send: (response: WebhookResponse) => void, options: HandleOptions, start: StartWork): void {
    if (telemetry !== undefined) ({ send, options } = traced(telemetry, request, send, options));
    let response: WebhookResponse | Promise<WebhookResponse> | undefined;
    try {
      const admitted = admission.admit(request);
      if (admitted === undefined || admitted instanceof AppBinding) catchUp?.delivered();
      if (admitted === undefined) response = intake.take(request, options, send, start);
      else response = admitted instanceof AppBinding ? intake.take(request, options, send, start, admitted) : admitted;
    } catch (cause) {
      response = answers.failed(cause);
    }
    // Nothing yet: the body is still arriving, and intake sends the answer once it is in.
    if (response !== undefined) answers.deliver(response, send, start);
  }

  // An errand without an event is onError's report of a refused request.
  const abandon = (event: ParsedWebhook | undefined) =>
    dispatcher.report(
      new WebhookError(
        'shutdown_abandoned',
        event ? `Shutdown did not wait for the handlers of a "${event.trigger}" event.` : 'Shutdown did not wait for onError to finish with a refused request.',
        { event },
      ),
    );

  return {
    maxBodyBytes,
    ...(settings.inbox && !consumer ? storeOnly(registrationMethods<Webhooks>(dispatcher), logger, settings.inbox) : registrationMethods<Webhooks>(dispatcher)),
    onDuplicate(handler) {
      answers.duplicateHandlers.add(handler);
      return this;
    },
    receive: queuedReceiver(settings, dispatcher, inFlight),
    report: async (error) => dispatcher.report(error),
    redeliver,
    reportDuplicate: (event, context) => answers.runDuplicateHandlers(event, context),
    // The caller of `handle` gets the response in promise jobs: the work waits for the next tick. An adapter
    // calling `respond` has written the response when `send` returns: the work starts then.
    handle: (request, options = NO_OPTIONS) => new Promise((resolve) => answer(request, resolve, options, defer)),
    respond: (request, send, options = NO_OPTIONS) => answer(request, send, options, startNow),
    health: () => intake.health.health(inFlight.closing),
    async close({ timeoutMs = 10_000 }: CloseOptions = {}) {
      inFlight.closing = true;
      stopObserving?.();
      // A catch-up run stops first: what it would still redeliver, the next start's run recovers.
      await catchUp?.close();
      // The worker finishes the events it holds (each bounded by handlerTimeoutMs); the rest wait in the inbox.
      await consumer?.close();
      const drained = await drain(inFlight, timeoutMs, abandon);
      // Requests waiting for a commit get their answer before the inbox goes (see src/delivery/inbox-users.ts).
      await intake.commitsSettled();
      await releaseInbox?.();
      return drained;
    },
  };
}

/** The catch-up's calls, when `catchUp` is set (settingsOf checked it has a coordinating inbox). */
function catchUpCalls(settings: Settings, redeliver: Webhooks['redeliver'], dispatcher: Dispatcher): CatchUpCalls | undefined {
  if (!settings.catchUp) return undefined;
  const parts = { inbox: settings.inbox as CoordinatingInbox, redeliver, telemetry: settings.telemetry, logger: settings.logger };
  return new CatchUpCalls(settings.catchUp, parts, (error) => dispatcher.report(error));
}

/** `receive`: an event from a queue, its handlers run as a delivery's are, resolved with their outcome. */
function queuedReceiver(settings: Settings, dispatcher: Dispatcher, inFlight: InFlight): Webhooks['receive'] {
  const { telemetry } = settings;
  return function receive(event: ParsedWebhook, context: ReceiveContext = {}, rawBody?: string): Promise<ReceiveOutcome> {
    let outcome: Outcome = [];
    const run = new FirstRunContext(settings.keyOf, event, undefined, context.receivedAt ?? Date.now(), context.key);
    const full: HandlerContext = context.attempt === undefined ? run : { key: run.key, attempt: context.attempt, receivedAt: run.receivedAt };
    const attempt = telemetry && consumerAttempt(telemetry, event, full, context);
    const settle = (failures: Outcome) => {
      outcome = failures;
      // Whether the queue tries again is the queue's to say (SQS's redrive policy): not counted dead here.
      attempt?.end(failures, false);
    };
    const work = () => {
      const handlers = () => dispatcher.dispatch(event, isKnownTrigger(event.trigger), rawBody, undefined, full);
      const result = attempt ? attempt.run(handlers) : handlers();
      if (!isThenable(result)) return void settle(result);
      return result.then(settle);
    };
    const errand = new Errand(event, work, inFlight);
    defer(errand);
    return errand.done.then(() => ({ ok: outcome.length === 0, failures: outcome }));
  };
}

/** A queued event's handlers, seen by telemetry as one attempt of a consumer of `context.queue`. */
function consumerAttempt(telemetry: Telemetry, event: ParsedWebhook, full: HandlerContext, context: ReceiveContext): AttemptTelemetry {
  return telemetry.attempt(context.queue ?? 'queue', attemptInfo(event, event.trigger, full.key, full.attempt, context.traceparent));
}

type Registration = Pick<Webhooks, keyof HandlerRegistry>;

/**
 * The registration of a receiver with `consume: false`: it stores each delivery and runs no handler for it, so
 * a handler registered here would never run for one (only `receive()` runs them). The first says so, once; not
 * refused, because `receive()` and onError (refusals, failed commits) still serve such a receiver.
 */
function storeOnly(methods: Registration, logger: WebhookLogger, inbox: Inbox): Registration {
  let warned = false;
  const warn = (method: string) => {
    if (warned) return;
    warned = true;
    logger.warn?.(
      { method, inbox: inbox.kind },
      `${method}() on a receiver created with \`consume: false\`: it stores deliveries and runs no handler for them. ` +
        'Register the handlers on a worker reading the same inbox (createWorker({ inbox })), or leave `consume` out to run them here.',
    );
  };
  return {
    ...methods,
    on(trigger, handler) {
      warn('on');
      // The trigger and handler as the caller typed them: methods.on checks nothing more.
      return methods.on.call(this, trigger, handler as never);
    },
    onAny(handler) {
      warn('onAny');
      return methods.onAny.call(this, handler);
    },
    onUnknown(handler) {
      warn('onUnknown');
      return methods.onUnknown.call(this, handler);
    },
  };
}
