/**
 * Intake: a request that passed admission has its body read, parsed, checked for a repeat, and is then
 * accepted (200, handlers afterwards), committed first (an inbox or `enqueue`), or refused.
 */
import { randomId, utf8Length } from '#platform';
import type { ParsedWebhook } from '../events/index.js';
import { Answers, OK, RETRY_LATER } from './answers.js';
import { BodyDeadlines, TIMED_OUT, type Arrival } from './body-deadlines.js';
import { bodyDigest } from './dedupe.js';
import { isThenable } from './dispatch.js';
import { WebhookError } from './errors.js';
import type { WebhookRequest, WebhookResponse } from './http.js';
import type { InFlight } from './in-flight.js';
import type { Settings } from './options.js';
import { inspectDelivery, type Delivery, type WebhookBody } from './parse.js';

/** Per-request choices an adapter makes for its runtime. */
export interface HandleOptions {
  /**
   * Hand each accepted event to this function (a queue send, say) instead of running the handlers here;
   * the 200 is sent once it resolved, and a rejection is answered 503 so the platform retries.
   */
  enqueue?: (event: ParsedWebhook) => Promise<unknown>;
  /** Overrides `handlerTimeoutMs` for this request's handlers (a serverless time budget, say). */
  handlerTimeoutMs?: number;
}

type Answer = WebhookResponse | Promise<WebhookResponse>;

export class Intake {
  constructor(
    private readonly settings: Settings,
    private readonly answers: Answers,
    private readonly inFlight: InFlight,
  ) {
    this.#deadlines = settings.bodyTimeoutMs > 0 ? new BodyDeadlines(settings.bodyTimeoutMs) : undefined;
  }

  readonly #deadlines: BodyDeadlines | undefined;

  /** Reads the body, then answers; synchronously when the body is in memory and nothing must be awaited. */
  take(request: WebhookRequest, options: HandleOptions): Answer {
    const { body } = request;
    if (typeof body !== 'function') return this.#answer(body, options);
    let reading: WebhookBody | Promise<WebhookBody>;
    try {
      reading = body(this.settings.maxBodyBytes);
    } catch (cause) {
      return this.answers.unreadable(cause);
    }
    if (!isThenable(reading)) return this.#answer(reading, options);
    const arrived = this.#deadlines ? this.#deadlines.watch(reading as Promise<WebhookBody>) : reading;
    return (arrived as Promise<Arrival>).then(
      (value) => (value === TIMED_OUT ? this.answers.bodyTimedOut(this.settings.bodyTimeoutMs) : this.#answer(value, options)),
      (cause: unknown) => this.answers.unreadable(cause),
    );
  }

  /** Answers a body that is in memory. */
  #answer(body: WebhookBody | null | undefined, options: HandleOptions): Answer {
    const { answers, settings } = this;
    // close() may have begun while the body arrived: its handlers would run after close() returned.
    if (this.inFlight.closing) return answers.shuttingDown();
    if (exceeds(body, settings.maxBodyBytes)) return answers.tooLarge();
    const delivery = inspectDelivery(body ?? '');
    const { event, error } = delivery;
    if (!event) return answers.refuse(error as WebhookError);
    if (error && settings.rejectInvalid) return answers.rejectPayload(error, event.trigger);

    // Without stable text there is nothing to recognise a repeat by: such a delivery is never taken for one.
    const content = delivery.unserializable ? undefined : (delivery.bytes ?? delivery.rawBody);
    if (settings.dedupe && content !== undefined && !settings.dedupe.add(content)) {
      settings.logger.debug?.({ trigger: event.trigger }, 'Ignored a repeated delivery.');
      return OK;
    }
    // An invalid payload is never queued: it goes to onError here.
    const enqueue = error ? undefined : options.enqueue;
    if (enqueue || settings.inbox) return this.#commit(delivery, event, content, enqueue, options.handlerTimeoutMs);
    return answers.accept(delivery, event, options.handlerTimeoutMs);
  }

  /** Hands the event to `enqueue`, or stores it in the inbox, before acknowledging it. */
  async #commit(
    delivery: Delivery,
    event: ParsedWebhook,
    content: string | Uint8Array | undefined,
    enqueue: HandleOptions['enqueue'],
    timeoutMs: number | undefined,
  ): Promise<WebhookResponse> {
    const { inbox, dedupe } = this.settings;
    const { rawBody } = delivery;
    const key = inbox ? keyOf(event.trigger, delivery) : '';
    try {
      if (enqueue) await enqueue(event);
      else await inbox?.put({ key, event, rawBody, receivedAt: Date.now() });
    } catch (cause) {
      if (content !== undefined) dedupe?.delete(content);
      const [code, message] = enqueue
        ? (['enqueue_failed', 'The event could not be queued; retry later.'] as const)
        : (['inbox_failed', 'The event could not be stored; retry later.'] as const);
      return this.answers.refuse(new WebhookError(code, message, { cause, event, rawBody }), RETRY_LATER);
    }
    if (enqueue) return OK;
    const response = this.answers.accept(delivery, event, timeoutMs);
    if (inbox?.ack) response.done.then(() => inbox.ack?.(key)).catch(() => undefined);
    return response;
  }
}

/** The delivery's idempotency key for an inbox, from its exact bytes (or text). */
function keyOf(trigger: string, delivery: Delivery): string {
  // Without stable text there is no key to recognise a repeat by: such a delivery is never taken for one.
  return `${trigger}:${delivery.unserializable ? randomId() : bodyDigest(delivery.bytes ?? delivery.rawBody)}`;
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
