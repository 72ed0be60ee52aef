/**
 * The receiver: `createWebhooks(options)` registers typed handlers and answers normalized requests
 * following the status table of DESIGN.md.
 */
import { randomUUID } from 'node:crypto';
import { createBasicAuthVerifier, type BasicAuthOption, type BasicAuthVerifier } from './auth.js';
import { bodyDigest, DedupeWindow, MAX_DEDUPE_KEYS, type DedupeOptions } from './dedupe.js';
import { ANY, Dispatcher, isThenable, UNKNOWN, type AnyHandler } from './dispatch.js';
import { describeCause, WebhookError } from './errors.js';
import type { EventOf, ParsedWebhook, UnknownWebhookEvent } from '../events/index.js';
import {
  isJsonContentType,
  isRepeatedHeader,
  readHeader,
  type WebhookRequest,
  type WebhookResponse,
} from './http.js';
import { consoleLogger, type WebhookLogger } from './logger.js';
import type { WebhookInbox } from './inbox.js';
import { inspectDelivery, type Delivery, type WebhookBody } from './parse.js';
import { isKnownTrigger, type Trigger } from '../events/index.js';

export interface WebhooksOptions {
  /**
   * The Basic credentials configured on the platform's webhook (`useBasicAuth`), or several while rotating.
   * Turning authentication off takes an explicit `false`.
   */
  auth: BasicAuthOption | false;
  /** Larger bodies are answered 413 without being read further. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * A known trigger whose `data` fails its schema goes to onError either way; `'accept'` (default) answers
   * 200 so the platform does not retry a payload that will never pass, `'reject'` answers 400.
   */
  invalidPayload?: 'accept' | 'reject';
  /** Repeats of a delivery within the window are answered 200 without running handlers. `false` turns it off. */
  dedupe?: DedupeOptions | false;
  /** A handler still running after this many milliseconds is reported to onError. Default 30 000; 0 turns it off. */
  handlerTimeoutMs?: number;
  /** Commit each event durably before acknowledging it. */
  inbox?: WebhookInbox;
  /** pino-compatible. Default: warnings and errors on the console. Never given credentials or message bodies. */
  logger?: WebhookLogger;
}

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

export interface CloseOptions {
  /** How long to wait for handlers already running. Default 10 000 ms. */
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

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const RESOLVED = Promise.resolve();
const NO_OPTIONS: HandleOptions = {};
/** Shared by every response that adds no header of its own: adapters only read response headers. */
const TEXT: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'text/plain; charset=utf-8' });
const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Basic realm="webhooks"' };
const RETRY_LATER = { 'retry-after': '5' };
/** The answer to a repeat or a queued event: nothing runs after it. */
const OK: WebhookResponse = Object.freeze({ status: 200, headers: TEXT, body: 'OK', done: RESOLVED });

/**
 * Work acknowledged and not yet finished: an event's handlers, or onError's report of a refusal. Jobs are
 * linked into their receiver's in-flight list from creation to end, for close(): a list rather than a Set,
 * whose add-then-delete on every request keeps rehashing it. A job's `done` promise is made only when
 * someone asks (Lambda and fetch adapters do, node:http never does), which spares one per request.
 */
class Job {
  #finished = false;
  #done?: Promise<void>;
  #resolve?: () => void;
  previous: Job | undefined;
  next: Job | undefined;

  constructor(
    readonly event: ParsedWebhook | undefined,
    private readonly work: () => Promise<void> | undefined,
    private readonly list: InFlight,
  ) {
    list.add(this);
  }

  get finished(): boolean {
    return this.#finished;
  }

  get done(): Promise<void> {
    if (this.#finished) return RESOLVED;
    return (this.#done ??= new Promise<void>((resolve) => (this.#resolve = resolve)));
  }

  start(): void {
    let running: Promise<void> | undefined;
    try {
      running = this.work();
    } catch {
      // Only a throwing logger gets here: the work itself reports every failure.
    }
    if (running) {
      const end = () => this.#end();
      running.then(end, end);
    } else {
      this.#end();
    }
  }

  #end(): void {
    this.#finished = true;
    this.list.remove(this);
    this.#resolve?.();
  }
}

/** A receiver's unfinished jobs, newest last. */
class InFlight {
  #first: Job | undefined;
  #last: Job | undefined;

  add(job: Job): void {
    job.previous = this.#last;
    if (this.#last) this.#last.next = job;
    else this.#first = job;
    this.#last = job;
  }

  remove(job: Job): void {
    if (job.previous) job.previous.next = job.next;
    else this.#first = job.next;
    if (job.next) job.next.previous = job.previous;
    else this.#last = job.previous;
    job.previous = job.next = undefined;
  }

  toArray(): Job[] {
    const jobs: Job[] = [];
    for (let job = this.#first; job; job = job.next) jobs.push(job);
    return jobs;
  }
}

/** A response whose `done` is its job's. */
class JobResponse implements WebhookResponse {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string,
    private readonly job: Job,
  ) {}

  get done(): Promise<void> {
    return this.job.done;
  }
}

/**
 * Starts jobs after the adapter has sent the response. The response is sent synchronously or in promise
 * jobs; node's next tick comes once those have drained, so handlers start right after the write, in the
 * same turn of the event loop. Elsewhere a zero timer does the same. Jobs queued in one tick share one
 * callback.
 */
let deferred: Job[] = [];
const nodeProcess = (globalThis as { process?: { nextTick?: (run: () => void) => void } }).process;
const nextTurn: (run: () => void) => void =
  typeof nodeProcess?.nextTick === 'function' ? (run) => nodeProcess.nextTick?.(run) : (run) => setTimeout(run, 0);
function runDeferred(): void {
  const jobs = deferred;
  deferred = [];
  // Each job guards itself, so one cannot stop the others.
  for (const job of jobs) job.start();
}
function defer(job: Job): void {
  if (deferred.push(job) === 1) nextTurn(runDeferred);
}

/** The delivery's idempotency key for an inbox, from its exact bytes (or text). */
function keyOf(trigger: string, delivery: Delivery): string {
  // Without stable text there is no key to recognise a repeat by: such a delivery is never taken for one.
  return `${trigger}:${delivery.unserializable ? randomUUID() : bodyDigest(delivery.bytes ?? delivery.rawBody)}`;
}

function checkOptions(options: WebhooksOptions): void {
  if (options === null || typeof options !== 'object') {
    throw new WebhookError('invalid_options', 'createWebhooks needs an options object: { auth: { username, password } }.');
  }
  if (options.auth === undefined) {
    throw new WebhookError(
      'invalid_options',
      'createWebhooks needs `auth`: the Basic credentials configured on the webhook ({ username, password }), ' +
        'or `auth: false` to accept unauthenticated requests.',
    );
  }
  const { maxBodyBytes, handlerTimeoutMs, invalidPayload } = options;
  if (maxBodyBytes !== undefined && !(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new WebhookError('invalid_options', '`maxBodyBytes` must be a positive whole number of bytes.');
  }
  if (handlerTimeoutMs !== undefined && !(handlerTimeoutMs >= 0)) {
    throw new WebhookError('invalid_options', '`handlerTimeoutMs` must be 0 (no limit) or a positive number.');
  }
  if (options.dedupe) {
    const { maxKeys, windowMs } = options.dedupe;
    if (maxKeys !== undefined && !(Number.isSafeInteger(maxKeys) && maxKeys > 0 && maxKeys <= MAX_DEDUPE_KEYS)) {
      throw new WebhookError('invalid_options', `\`dedupe.maxKeys\` must be a whole number from 1 to ${MAX_DEDUPE_KEYS}.`);
    }
    if (windowMs !== undefined && !(windowMs > 0)) {
      throw new WebhookError('invalid_options', '`dedupe.windowMs` must be a positive number of milliseconds.');
    }
  }
  if (invalidPayload !== undefined && invalidPayload !== 'accept' && invalidPayload !== 'reject') {
    throw new WebhookError('invalid_options', "`invalidPayload` must be 'accept' or 'reject'.");
  }
}

/** Creates a receiver. */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  checkOptions(options);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const rejectInvalid = options.invalidPayload === 'reject';
  const logger = options.logger ?? consoleLogger;
  const verify: BasicAuthVerifier | undefined = options.auth === false ? undefined : createBasicAuthVerifier(options.auth);
  const dedupe = options.dedupe === false ? undefined : new DedupeWindow(options.dedupe);
  const { inbox } = options;
  const dispatcher = new Dispatcher({ handlerTimeoutMs: options.handlerTimeoutMs ?? 30_000, logger });

  let closing = false;
  const inFlight = new InFlight();

  /** Starts the job after the response; the response's `done` settles once the job has, whatever happens. */
  function later(status: number, body: string, headers: Readonly<Record<string, string>>, job: Job): WebhookResponse {
    defer(job);
    return new JobResponse(status, headers, body, job);
  }

  function reply(status: number, body: string, headers?: Record<string, string>): WebhookResponse {
    return { status, headers: headers ? { ...TEXT, ...headers } : TEXT, body, done: RESOLVED };
  }

  /** Answers a rejected request; the error reaches onError after the response. */
  function refuse(error: WebhookError, headers?: Record<string, string>): WebhookResponse {
    logger.debug?.({ code: error.code, status: error.status }, 'Refused a webhook request.');
    const job = new Job(undefined, () => dispatcher.report(error), inFlight);
    return later(error.status, error.message, headers ? { ...TEXT, ...headers } : TEXT, job);
  }

  function tooLarge(): WebhookResponse {
    // Closing the connection spares reading the rest of an oversized body.
    return refuse(new WebhookError('payload_too_large', `The body exceeds ${maxBodyBytes} bytes.`), {
      connection: 'close',
    });
  }

  function unreadable(cause: unknown): WebhookResponse {
    return refuse(new WebhookError('invalid_json', 'The request body could not be read.', { cause }));
  }

  /** Anything unforeseen is still answered, never with a stack trace. */
  function failed(cause: unknown): WebhookResponse {
    logger.error?.({ reason: describeCause(cause) }, 'Unexpected failure while handling a webhook request.');
    return reply(500, 'Internal error.');
  }

  /** Acknowledges an event and runs its handlers (and onError for an accepted invalid payload) afterwards. */
  function accept(delivery: Delivery, event: ParsedWebhook, timeoutMs: number | undefined): WebhookResponse {
    const { error, known, rawBody } = delivery;
    const text = typeof rawBody === 'string' ? rawBody : undefined;
    const work = error ? () => dispatcher.report(error) : () => dispatcher.dispatch(event, known, text, timeoutMs);
    return later(200, 'OK', TEXT, new Job(event, work, inFlight));
  }

  /** The checks made on the headers alone, before any of the body is read. */
  function refusal(request: WebhookRequest): WebhookResponse | undefined {
    if (closing) {
      return reply(503, 'The receiver is shutting down; retry later.', { ...RETRY_LATER, connection: 'close' });
    }
    const { method, headers } = request;
    if (method !== 'POST' && method.toUpperCase() !== 'POST') {
      return reply(405, 'Webhook deliveries must use POST.', { allow: 'POST' });
    }
    const length = readHeader(headers, 'content-length');
    if (length !== undefined && Number(length) > maxBodyBytes) return tooLarge();
    const contentType = readHeader(headers, 'content-type');
    if (contentType && !isJsonContentType(contentType)) {
      return refuse(
        new WebhookError('unsupported_media_type', `Webhook deliveries are JSON; got Content-Type "${contentType.slice(0, 100)}".`),
      );
    }
    if (verify && (isRepeatedHeader(headers, 'authorization') || !verify(readHeader(headers, 'authorization')))) {
      return refuse(
        new WebhookError('unauthorized', 'The request lacks valid Basic credentials for this webhook.'),
        UNAUTHORIZED_HEADERS,
      );
    }
    return undefined;
  }

  /** Reads the body, then answers; synchronously when the body is in memory and nothing must be awaited. */
  function receiveBody(request: WebhookRequest, options: HandleOptions): WebhookResponse | Promise<WebhookResponse> {
    const { body } = request;
    if (typeof body !== 'function') return answer(body, options);
    let reading: WebhookBody | Promise<WebhookBody>;
    try {
      reading = body(maxBodyBytes);
    } catch (cause) {
      return unreadable(cause);
    }
    if (!isThenable(reading)) return answer(reading, options);
    return (reading as Promise<WebhookBody>).then((value) => answer(value, options), unreadable);
  }

  /** Answers a body that is in memory. */
  function answer(body: WebhookBody | null | undefined, options: HandleOptions): WebhookResponse | Promise<WebhookResponse> {
    if (exceeds(body, maxBodyBytes)) return tooLarge();
    const delivery = inspectDelivery(body ?? '');
    const { event, error } = delivery;
    if (!event) return refuse(error as WebhookError);
    if (error && rejectInvalid) return refuse(error);

    // Without stable text there is nothing to recognise a repeat by: such a delivery is never taken for one.
    const content = delivery.unserializable ? undefined : (delivery.bytes ?? delivery.rawBody);
    if (dedupe && content !== undefined && !dedupe.add(content)) {
      logger.debug?.({ trigger: event.trigger }, 'Ignored a repeated delivery.');
      return OK;
    }
    // An invalid payload is never queued: it goes to onError here.
    const enqueue = error ? undefined : options.enqueue;
    if (enqueue || inbox) return commit(delivery, event, content, enqueue, options.handlerTimeoutMs);
    return accept(delivery, event, options.handlerTimeoutMs);
  }

  /** Hands the event to `enqueue`, or stores it in the inbox, before acknowledging it. */
  async function commit(
    delivery: Delivery,
    event: ParsedWebhook,
    content: string | Uint8Array | undefined,
    enqueue: HandleOptions['enqueue'],
    timeoutMs: number | undefined,
  ): Promise<WebhookResponse> {
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
      return refuse(new WebhookError(code, message, { cause, event, rawBody }), RETRY_LATER);
    }
    if (enqueue) return OK;
    const response = accept(delivery, event, timeoutMs);
    if (inbox?.ack) response.done.then(() => inbox.ack?.(key)).catch(() => undefined);
    return response;
  }

  function respond(request: WebhookRequest, send: (response: WebhookResponse) => void, options = NO_OPTIONS): void {
    let response: WebhookResponse | Promise<WebhookResponse>;
    try {
      response = refusal(request) ?? receiveBody(request, options);
    } catch (cause) {
      response = failed(cause);
    }
    if (isThenable(response)) (response as Promise<WebhookResponse>).then(send, (cause: unknown) => send(failed(cause)));
    else send(response as WebhookResponse);
  }

  const webhooks: Webhooks = {
    maxBodyBytes,
    on(trigger, handler) {
      for (const name of typeof trigger === 'string' ? [trigger] : trigger) {
        if (!isKnownTrigger(name)) {
          throw new WebhookError('invalid_options', `Unknown trigger "${name}"; use onUnknown for triggers this version does not know.`);
        }
        dispatcher.on(name, handler as AnyHandler);
      }
      return this;
    },
    onAny(handler) {
      dispatcher.on(ANY, handler as AnyHandler);
      return this;
    },
    onUnknown(handler) {
      dispatcher.on(UNKNOWN, handler as AnyHandler);
      return this;
    },
    onError(handler) {
      dispatcher.onError(handler);
      return this;
    },
    off(triggerOrHandler: unknown, maybeHandler?: unknown) {
      if (typeof triggerOrHandler === 'function') {
        dispatcher.offEverywhere(triggerOrHandler as AnyHandler);
      } else {
        const names = typeof triggerOrHandler === 'string' ? [triggerOrHandler] : (triggerOrHandler as string[]);
        for (const name of names) dispatcher.off(name, maybeHandler as AnyHandler);
      }
      return this;
    },
    receive(event) {
      const job = new Job(event, () => dispatcher.dispatch(event, isKnownTrigger(event)), inFlight);
      defer(job);
      return job.done;
    },
    handle: (request, options) => new Promise((resolve) => respond(request, resolve, options)),
    respond,
    async close({ timeoutMs = 10_000 }: CloseOptions = {}) {
      closing = true;
      const pending = inFlight.toArray();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([Promise.all(pending.map((job) => job.done)), deadline]);
      clearTimeout(timer);
      const abandoned = pending.filter((job) => !job.finished);
      await Promise.all(
        abandoned.map(({ event }) =>
          dispatcher.report(
            new WebhookError('shutdown_abandoned', `Shutdown did not wait for the handlers of a "${event?.trigger}" event.`, {
              event,
            }),
          ),
        ),
      );
      return { drained: pending.length - abandoned.length, abandoned: abandoned.length };
    },
  };
  return webhooks;
}

/** Whether a body is longer than the limit in UTF-8 bytes. A pre-parsed body's size is unknown: it passes. */
function exceeds(body: WebhookBody | null | undefined, limit: number): boolean {
  if (typeof body === 'string') {
    // A string of n UTF-16 units is at most 3n UTF-8 bytes: count exactly only when it could matter.
    return body.length * 3 > limit && Buffer.byteLength(body) > limit;
  }
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength > limit;
  return false;
}

