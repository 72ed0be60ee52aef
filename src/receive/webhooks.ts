/**
 * The receiver: `createWebhooks(options)` wires the named parts together (options, admission checks,
 * intake, in-flight tracking, dispatch) behind the `Webhooks` interface. It answers normalized requests
 * following the status table of docs/design.md.
 */
import type { EventOf, ParsedWebhook, Trigger, UnknownWebhookEvent } from '../events/index.js';
import { isKnownTrigger } from '../events/index.js';
import { Admission } from './admission.js';
import { Answers } from './answers.js';
import { ANY, Dispatcher, isThenable, UNKNOWN, type AnyHandler } from './dispatch.js';
import { WebhookError } from './errors.js';
import type { WebhookRequest, WebhookResponse } from './http.js';
import { defer, drain, Errand, InFlight } from './in-flight.js';
import { Intake, type HandleOptions } from './intake.js';
import { settingsOf, type WebhooksOptions } from './options.js';

export type { HandleOptions } from './intake.js';
export type { WebhooksOptions } from './options.js';

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

export interface Webhooks {
  /** Handles one trigger, or several: the handler gets the event typed by trigger. */
  on<T extends Trigger>(trigger: T | readonly T[], handler: (event: EventOf<T>) => unknown): this;
  /** Handles every accepted event, known or not. */
  onAny(handler: (event: ParsedWebhook) => unknown): this;
  /** Handles events whose trigger this version does not know. */
  onUnknown(handler: (event: UnknownWebhookEvent) => unknown): this;
  /** Receives every failure: rejected requests, invalid payloads, failed or overdue handlers. */
  onError(handler: (error: WebhookError) => unknown): this;
  /** Removes a handler: from one trigger or several, or from everything it was registered for. */
  off(trigger: Trigger | readonly Trigger[], handler: (event: never) => unknown): this;
  off(handler: ((event: never) => unknown) | ((error: WebhookError) => unknown)): this;
  /** Dispatches an already-parsed event (from a queue, say); settles when its handlers have. */
  receive(event: ParsedWebhook): Promise<void>;
  /** Answers a normalized request; the response comes before the handlers run (see `done`). */
  handle(request: WebhookRequest, options?: HandleOptions): Promise<WebhookResponse>;
  /**
   * `handle` for adapters on a hot path: the response goes to `send`, synchronously once the body is in
   * memory unless an `enqueue` or inbox must be awaited. `send` is called exactly once.
   */
  respond(request: WebhookRequest, send: (response: WebhookResponse) => void, options?: HandleOptions): void;
  /** Stops taking requests (503) and waits for running handlers up to a deadline. */
  close(options?: CloseOptions): Promise<CloseResult>;
  /** The body size limit adapters enforce while reading. */
  readonly maxBodyBytes: number;
}

const NO_OPTIONS: HandleOptions = {};

/** Creates a receiver; a mistake in the options throws a `ConfigurationError` here. */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const settings = settingsOf(options);
  const { logger, maxBodyBytes } = settings;
  const dispatcher = new Dispatcher({ handlerTimeoutMs: settings.handlerTimeoutMs, logger });
  const inFlight = new InFlight();
  const answers = new Answers(dispatcher, inFlight, logger, maxBodyBytes);
  const admission = new Admission(settings, answers, inFlight);
  const intake = new Intake(settings, answers, inFlight);

  function respond(request: WebhookRequest, send: (response: WebhookResponse) => void, options = NO_OPTIONS): void {
    let response: WebhookResponse | Promise<WebhookResponse>;
    try {
      response = admission.refusal(request) ?? intake.take(request, options);
    } catch (cause) {
      response = answers.failed(cause);
    }
    if (isThenable(response)) (response as Promise<WebhookResponse>).then(send, (cause: unknown) => send(answers.failed(cause)));
    else send(response as WebhookResponse);
  }

  const abandon = (event: ParsedWebhook | undefined) =>
    dispatcher.report(
      new WebhookError('shutdown_abandoned', `Shutdown did not wait for the handlers of a "${event?.trigger}" event.`, { event }),
    );

  return {
    maxBodyBytes,
    on(trigger, handler) {
      dispatcher.onTriggers(trigger, handler as AnyHandler);
      return this;
    },
    onAny(handler) {
      dispatcher.on(ANY, handler as AnyHandler, 'onAny');
      return this;
    },
    onUnknown(handler) {
      dispatcher.on(UNKNOWN, handler as AnyHandler, 'onUnknown');
      return this;
    },
    onError(handler) {
      dispatcher.onError(handler);
      return this;
    },
    off(triggerOrHandler: unknown, handler?: unknown) {
      dispatcher.offTriggers(triggerOrHandler, handler);
      return this;
    },
    receive(event) {
      const errand = new Errand(event, () => dispatcher.dispatch(event, isKnownTrigger(event)), inFlight);
      defer(errand);
      return errand.done;
    },
    handle: (request, options) => new Promise((resolve) => respond(request, resolve, options)),
    respond,
    close({ timeoutMs = 10_000 }: CloseOptions = {}) {
      inFlight.closing = true;
      return drain(inFlight, timeoutMs, abandon);
    },
  };
}
