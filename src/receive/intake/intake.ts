/**
 * Intake: a request that passed admission has its body read, parsed, and is then committed first (to the
 * inbox, or forwarded by `enqueue`) and answered by the commit's outcome, or checked for a repeat in memory
 * and accepted (200, handlers afterwards), or refused.
 */
import { randomId, utf8Length } from '#platform';
import { appIdOf, type ParsedWebhook } from '../../events/index.js';
import type { Inbox, InboxEntry } from '../../delivery/port.js';
import { Answers, OK, RETRY_LATER } from './answers.js';
import type { AppBinding } from '../auth/auth.js';
import { CommitTimeout, Commits } from './commit.js';
import { BodyDeadlines, TIMED_OUT, Watched, whenRead, type Arrival, type Reading } from './body-deadlines.js';
import { isThenable } from '../../dispatch/dispatcher.js';
import { WebhookError } from '../../dispatch/errors.js';
import { forwardingInbox, type Enqueue } from './forward.js';
import { BodyArrival, type BodyReader, type WebhookRequest, type WebhookResponse } from '../http.js';
import type { InFlight, StartWork } from './in-flight.js';
import type { Settings } from '../options.js';
import { loadExplainer } from '../parse/explainer.js';
import { inspectDelivery, type Delivery, type WebhookBody } from '../parse/parse.js';
import { digest } from '../../dispatch/attempts.js';
import type { RequestTelemetry } from '../../telemetry/hooks.js';

/** Per-request choices an adapter makes for its runtime. */
export interface HandleOptions {
  /**
   * Hand each accepted event to this function (a queue send, say) instead of running the handlers here;
   * the 200 is sent once it resolved, and a rejection is answered 503 so the platform retries. It is an
   * inbox that forwards (src/receive/intake/forward.ts): the same commit path as `inbox`.
   */
  enqueue?: Enqueue;
  /** Overrides `handlerTimeoutMs` for this request's handlers (a serverless time budget, say). */
  handlerTimeoutMs?: number;
  /**
   * Shortens `commitTimeoutMs` for this request (never lengthens it): a serverless function answers 503 before
   * its invocation runs out of time, rather than being stopped without an answer.
   */
  commitTimeoutMs?: number;
  /** The route the adapter matched (`/webhooks`), for telemetry's span name and `http.route`. */
  route?: string;
}

/** Handle options as intake sees them: with the request's telemetry when it is on (src/receive/intake/traced.ts). */
export interface TracedOptions extends HandleOptions {
  readonly trace?: RequestTelemetry;
  /** Set for a body rebuilt by reconcile (`webhooks.redeliver`): the handlers are told, and a repeat is noted. */
  readonly replay?: Replay;
}

/** A redelivered body's own record: where it came from, and whether it was a repeat (a 200 says neither). */
export interface Replay {
  readonly source: 'reconcile';
  duplicate: boolean;
}

export type Answer = WebhookResponse | Promise<WebhookResponse>;

export class Intake {
  readonly #commits: Commits;
  readonly #forwarders = new WeakMap<Enqueue, Inbox>();

  constructor(
    private readonly settings: Settings,
    readonly answers: Answers,
    private readonly inFlight: InFlight,
  ) {
    this.#commits = new Commits(settings.commitTimeoutMs, settings.inbox);
    this.#deadlines = settings.bodyTimeoutMs > 0 ? new BodyDeadlines(settings.bodyTimeoutMs) : undefined;
  }

  readonly #deadlines: BodyDeadlines | undefined;

  /** Resolves once every request waiting for a commit has its answer: then the inbox may be closed. */
  commitsSettled(): Promise<void> {
    return this.#commits.settled();
  }

  /**
   * Reads the body, then answers: returns the answer when the body is in memory (synchronously unless an
   * inbox must be awaited); for a body still arriving, returns nothing and hands the answer to `send` later.
   * `apps`: the apps the request's credentials are bound to (absent: any app).
   */
  take(
    request: WebhookRequest,
    options: HandleOptions,
    send: (response: WebhookResponse) => void,
    start: StartWork,
    apps?: AppBinding,
  ): Answer | undefined {
    const { body } = request;
    if (typeof body !== 'function') return this.#answer(body, options, apps);
    let reading: ReturnType<BodyReader>;
    try {
      reading = body(this.settings.maxBodyBytes);
    } catch (cause) {
      return this.answers.unreadable(cause);
    }
    if (!(reading instanceof BodyArrival) && !isThenable(reading)) return this.#answer(reading, options, apps);
    this.#whenArrived(reading as Reading, options, send, start, apps);
    return undefined;
  }

  /** Answers a body still arriving once it is in: one listener object, where closures cost each request more. */
  #whenArrived(reading: Reading, options: HandleOptions, send: (response: WebhookResponse) => void, start: StartWork, apps?: AppBinding): void {
    const pending = new PendingAnswer(this, options, send, start, apps);
    if (this.#deadlines) this.#deadlines.listen(reading, pending);
    else whenRead(reading, pending);
  }

  /** The answer to a body that arrived (or did not in time), for PendingAnswer. */
  answerArrival(arrival: Arrival, options: HandleOptions, apps: AppBinding | undefined): Answer {
    return arrival === TIMED_OUT ? this.answers.bodyTimedOut(this.settings.bodyTimeoutMs) : this.#answer(arrival, options, apps);
  }

  /** Answers a body rebuilt outside HTTP (reconcile): every check after admission's, whose are about the request. */
  replay(body: string, replay: Replay): Answer {
    return this.#answer(body, { replay }, undefined);
  }

  /** Answers a body that is in memory. */
  #answer(body: WebhookBody | null | undefined, options: TracedOptions, apps: AppBinding | undefined): Answer {
    const { answers, settings } = this;
    // close() may have begun while the body arrived: its handlers would run after close() returned.
    if (this.inFlight.closing) return answers.shuttingDown();
    if (exceeds(body, settings.maxBodyBytes)) return answers.tooLarge();
    const delivery = inspectDelivery(body ?? '');
    // The first rejection loads zod's side, off the happy path, then is answered with its issues explained.
    if (delivery.unexplained) {
      return loadExplainer().then(
        () => this.#answer(body, options, apps),
        () => this.#answerDelivery(delivery, options, apps),
      );
    }
    return this.#answerDelivery(delivery, options, apps);
  }

  #answerDelivery(delivery: Delivery, options: TracedOptions, apps: AppBinding | undefined): Answer {
    const { answers, settings } = this;
    const { event, error } = delivery;
    if (!event) return answers.refuse(error as WebhookError);
    const { trace } = options;
    if (trace !== undefined) this.#parsed(trace, delivery, event);
    // Before anything else is done with the event (an invalid payload's report included): it is not this
    // credential's to deliver.
    if (apps && !apps.allows(event)) return answers.refuse(appMismatch(event, delivery.rawBody));
    if (error && settings.rejectInvalid) return answers.rejectPayload(error, event.trigger);

    // An invalid payload is never stored: it goes to onError here.
    const target = error ? undefined : options.enqueue ? this.#forwarder(options.enqueue) : settings.inbox;
    if (target) return this.#commit(target, delivery, event, options);

    // One clock read serves the window and the handlers' `receivedAt`: each read costs a request about 70 ns.
    const now = Date.now();
    if (settings.dedupe) {
      // A repeat is the same idempotency key: its fields where the event has them (cheaper to remember than the
      // body, and a resend with other bytes is still recognised), else the exact body. Without either (no fields,
      // no stable text) there is nothing to recognise a repeat by: such a delivery is never taken for one.
      const content = delivery.unserializable ? undefined : (delivery.bytes ?? delivery.rawBody);
      const fieldKey = settings.fieldKeyOf(event);
      const identity = fieldKey ?? content;
      if (identity !== undefined && !settings.dedupe.add(identity, now)) {
        trace?.duplicate();
        if (options.replay) options.replay.duplicate = true;
        return answers.duplicate(event, () => fieldKey ?? settings.keyOf(event, content), now);
      }
    }
    return answers.accept(delivery, event, options.handlerTimeoutMs, now, trace, options.replay?.source);
  }

  /** Tells telemetry of the event; its key's digest is computed only if asked (a span being recorded). */
  #parsed(trace: RequestTelemetry, delivery: Delivery, event: ParsedWebhook): void {
    const content = delivery.unserializable ? undefined : (delivery.bytes ?? delivery.rawBody);
    trace.parsed(event, () => digest(this.settings.keyOf(event, content)), digest);
  }

  /** Stores the event (or forwards it), then answers by the outcome: 200, 200 for a duplicate, or 503. */
  #commit(target: Inbox, delivery: Delivery, event: ParsedWebhook, options: TracedOptions): Promise<WebhookResponse> {
    const { trace } = options;
    const { rawBody } = delivery;
    // Without stable text, only a documented key can recognise a repeat; the body digest must not merge events.
    const key = this.settings.keyOf(event, delivery.unserializable ? randomId() : (delivery.bytes ?? rawBody));
    const receivedAt = Date.now();
    const span = trace?.commit(target.kind);
    const entry: InboxEntry = { key, trigger: event.trigger, event, rawBody, receivedAt };
    if (span?.traceparent) entry.traceparent = span.traceparent;
    return this.#commits.store(target, entry, options.commitTimeoutMs).then(
      (result) => {
        span?.end(result);
        if (result === 'stored') return OK;
        trace?.duplicate();
        if (options.replay) options.replay.duplicate = true;
        return this.answers.duplicate(event, () => key, receivedAt);
      },
      (cause: unknown) => {
        span?.end(undefined, cause);
        return this.answers.refuse(commitFailure(cause, event, rawBody), RETRY_LATER);
      },
    );
  }

  /** What the receiver knows of its inbox, from its commits. */
  get health() {
    return this.#commits.health;
  }

  #forwarder(enqueue: Enqueue): Inbox {
    let forwarding = this.#forwarders.get(enqueue);
    if (!forwarding) this.#forwarders.set(enqueue, (forwarding = forwardingInbox(enqueue)));
    return forwarding;
  }
}

/** A request whose body is still arriving: it answers once the body is in, or failed, or took too long. */
class PendingAnswer extends Watched {
  constructor(
    private readonly intake: Intake,
    private readonly options: HandleOptions,
    private readonly send: (response: WebhookResponse) => void,
    private readonly start: StartWork,
    private readonly apps: AppBinding | undefined,
  ) {
    super();
  }

  answer(arrival: Arrival): void {
    const { answers } = this.intake;
    let answer: Answer;
    try {
      answer = this.intake.answerArrival(arrival, this.options, this.apps);
    } catch (cause) {
      answer = answers.failed(cause);
    }
    answers.deliver(answer, this.send, this.start);
  }

  unreadable(cause: unknown): void {
    const { answers } = this.intake;
    answers.deliver(answers.unreadable(cause), this.send, this.start);
  }
}

/** The refusal of an event whose credentials are bound to other apps. */
function appMismatch(event: ParsedWebhook, rawBody: string): WebhookError {
  const appId = appIdOf(event);
  const message =
    appId === undefined
      ? 'The delivery names no appId, and its credentials are bound to apps (auth[].appId).'
      : `The delivery's appId ${JSON.stringify(appId.slice(0, 100))} is not an app its credentials are bound to (auth[].appId).`;
  return new WebhookError('app_mismatch', message, { event, rawBody });
}

/** Turns an inbox's failure into the error onError gets, with the event and its raw body. */
function commitFailure(cause: unknown, event: ParsedWebhook, rawBody: string): WebhookError {
  if (cause instanceof WebhookError) return new WebhookError(cause.code, cause.message, { cause: cause.cause ?? cause, event, rawBody });
  const message =
    cause instanceof CommitTimeout
      ? `The event could not be stored in time (${cause.message}); retry later.`
      : 'The event could not be stored; retry later.';
  return new WebhookError('inbox_failed', message, { cause, event, rawBody });
}

/** Whether a body is longer than the limit in UTF-8 bytes. A pre-parsed body's size is unknown: it passes. */
function exceeds(body: WebhookBody | null | undefined, limit: number): boolean {
  if (typeof body === 'string') {
    // A string of n UTF-16 units is at most 3n UTF-8 bytes: count exactly only when it could matter.
    return body.length * 3 > limit && utf8Length(body) > limit;
  }
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength > limit;
  return false;
}
