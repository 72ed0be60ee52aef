/**
 * The receiver: `createWebhooks(options)` registers typed handlers and answers normalized requests
 * following the status table of DESIGN.md.
 */
import { randomUUID } from 'node:crypto';
import { isKnownTrigger, type ParsedWebhook } from '../events/index.js';
import type { Inbox } from '../inbox/port.js';
import { createBasicAuthVerifier, type BasicAuthOption, type BasicAuthVerifier } from './auth.js';
import { Consumer, consumerSettings, type WorkerOptions } from './consume.js';
import { DedupeWindow, MAX_DEDUPE_KEYS, type DedupeOptions } from './dedupe.js';
import { Dispatcher, isThenable, type HandlerContext, type Outcome } from './dispatch.js';
import { WebhookError } from './errors.js';
import { forwardingInbox, type Enqueue } from './forward.js';
import { registrationMethods, type HandlerRegistry } from './handlers.js';
import {
  isJsonContentType,
  isRepeatedHeader,
  readHeader,
  type WebhookRequest,
  type WebhookResponse,
} from './http.js';
import { keyFunction, type IdempotencyKeys } from './idempotency.js';
import { CommitTimeout, Intake } from './intake.js';
import { defer, InFlight, Job, JobResponse } from './jobs.js';
import { consoleLogger, type WebhookLogger } from './logger.js';
import { inspectDelivery, type Delivery, type WebhookBody } from './parse.js';

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
  /**
   * Without an inbox: repeats of a delivery within the window are answered 200 without running handlers
   * (in memory, this process only). `false` turns it off. With an inbox, the inbox's window decides.
   */
  dedupe?: DedupeOptions | false;
  /** A handler still running after this many milliseconds is reported to onError. Default 30 000; 0 turns it off. */
  handlerTimeoutMs?: number;
  /**
   * Store each event in this inbox before answering 200 (`sqliteInbox`, `redisInbox`, `memoryInbox`): a
   * duplicate within the inbox's window is answered 200 and reaches onDuplicate only; a failed or slow
   * commit is answered 503 with Retry-After and reaches onError (`inbox_failed`).
   */
  inbox?: Inbox;
  /** With an inbox: run the handlers in this process (default `true`); `false` only receives. */
  consume?: boolean;
  /** With an inbox and `consume`: the in-process worker's settings (see `createWorker`). */
  worker?: Omit<WorkerOptions, 'inbox' | 'logger' | 'handlerTimeoutMs'>;
  /** With an inbox: a commit that takes longer is answered 503 (the platform waits about 2 s). Default 2 000 ms. */
  commitTimeoutMs?: number;
  /** Per-trigger idempotency keys replacing the documented ones (see README, "Idempotency keys"). */
  idempotencyKeys?: IdempotencyKeys;
  /** pino-compatible. Default: warnings and errors on the console. Never given credentials or message bodies. */
  logger?: WebhookLogger;
}

/** Per-request choices an adapter makes for its runtime. */
export interface HandleOptions {
  /**
   * Hand each accepted event to this function (a queue send, say) instead of running the handlers here;
   * the 200 is sent once it resolved, and a rejection is answered 503 so the platform retries. It is an
   * inbox that forwards (see src/receive/forward.ts): the same commit path as `inbox`.
   */
  enqueue?: Enqueue;
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

/** What onDuplicate handlers learn about a repeated delivery. */
export interface DuplicateContext {
  key: string;
  receivedAt: number;
}

/** How the handlers of one event went: `failures` is empty when every handler succeeded. */
export interface ReceiveOutcome {
  ok: boolean;
  failures: readonly WebhookError[];
}

export interface Webhooks extends HandlerRegistry {
  /** Called for each repeated delivery that was answered 200 without running handlers (inbox or dedupe window). */
  onDuplicate(handler: (event: ParsedWebhook, context: DuplicateContext) => unknown): this;
  /**
   * Dispatches an already-parsed event (from a queue, say); resolves once its handlers have, with the
   * failures, so a queue consumer can retry the event: `if (!(await webhooks.receive(event)).ok) throw ...`.
   */
  receive(event: ParsedWebhook, context?: Partial<HandlerContext>): Promise<ReceiveOutcome>;
  /** Answers a normalized request; the response comes before the handlers run (see `done`). */
  handle(request: WebhookRequest, options?: HandleOptions): Promise<WebhookResponse>;
  /**
   * `handle` for adapters on a hot path: the response goes to `send`, synchronously once the body is in
   * memory unless an `enqueue` or inbox must be awaited. `send` is called exactly once.
   */
  respond(request: WebhookRequest, send: (response: WebhookResponse) => void, options?: HandleOptions): void;
  /** Stops taking requests (503), stops the in-process worker, and waits for running handlers up to a deadline. */
  close(options?: CloseOptions): Promise<CloseResult>;
  /** The body size limit adapters enforce while reading. */
  readonly maxBodyBytes: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const RESOLVED = Promise.resolve();
const DEFAULT_COMMIT_TIMEOUT_MS = 2000;
const NO_OPTIONS: HandleOptions = {};
/** Shared by every response that adds no header of its own: adapters only read response headers. */
const TEXT: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'text/plain; charset=utf-8' });
const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Basic realm="webhooks"' };
const RETRY_LATER = { 'retry-after': '5' };
/** The answer to a repeat or a queued event: nothing runs after it. */
const OK: WebhookResponse = Object.freeze({ status: 200, headers: TEXT, body: 'OK', done: RESOLVED });

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
  const { inbox, commitTimeoutMs } = options;
  if (inbox !== undefined && (typeof inbox !== 'object' || typeof inbox.put !== 'function' || typeof inbox.claim !== 'function')) {
    throw new WebhookError('invalid_options', '`inbox` must be an Inbox: memoryInbox(), sqliteInbox({ path }) or redisInbox({ url }).');
  }
  if (commitTimeoutMs !== undefined && !(commitTimeoutMs > 0)) {
    throw new WebhookError('invalid_options', '`commitTimeoutMs` must be a positive number of milliseconds.');
  }
}

/** The body as text for an inbox (it arrived as text or as valid UTF-8 bytes: parsing checked). */
const textOf = (rawBody: string | Uint8Array): string => (typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody));

/** A context whose key is computed only if a handler reads it: the fast path does not pay for a digest. */
class FirstRunContext implements HandlerContext {
  readonly attempt = 1;
  readonly receivedAt: number;
  #key?: string;
  readonly #keyOf: () => string;
  constructor(keyOf: () => string, receivedAt: number) {
    this.#keyOf = keyOf;
    this.receivedAt = receivedAt;
  }
  get key(): string {
    return (this.#key ??= this.#keyOf());
  }
}

/** Turns an inbox's failure into the error onError gets, with the event and its raw body. */
function commitFailure(cause: unknown, event: ParsedWebhook, rawBody: string): WebhookError {
  if (cause instanceof WebhookError) return new WebhookError(cause.code, cause.message, { cause: (cause as Error).cause ?? cause, event, rawBody });
  const message =
    cause instanceof CommitTimeout
      ? `The event could not be stored in time (${cause.message}); retry later.`
      : 'The event could not be stored; retry later.';
  return new WebhookError('inbox_failed', message, { cause, event, rawBody });
}

/** Creates a receiver. */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  checkOptions(options);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const rejectInvalid = options.invalidPayload === 'reject';
  const logger = options.logger ?? consoleLogger;
  const verify: BasicAuthVerifier | undefined = options.auth === false ? undefined : createBasicAuthVerifier(options.auth);
  const { inbox } = options;
  // With an inbox, the inbox owns "seen before"; the in-memory window is the fast path's.
  const dedupe = options.dedupe === false || inbox ? undefined : new DedupeWindow(options.dedupe);
  const handlerTimeoutMs = options.handlerTimeoutMs ?? 30_000;
  const dispatcher = new Dispatcher({ handlerTimeoutMs, logger });
  const keyOf = keyFunction(options.idempotencyKeys);
  const intake = new Intake(options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS);
  const duplicateHandlers = new Set<(event: ParsedWebhook, context: DuplicateContext) => unknown>();
  const forwarders = new WeakMap<Enqueue, Inbox>();
  const consumer =
    inbox && options.consume !== false
      ? new Consumer(consumerSettings({ ...options.worker, inbox, handlerTimeoutMs, logger }), dispatcher)
      : undefined;
  consumer?.start();

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
    logger.error?.({ reason: String(cause) }, 'Unexpected failure while handling a webhook request.');
    return reply(500, 'Internal error.');
  }

  /** Acknowledges an event and runs its handlers (and onError for an accepted invalid payload) afterwards. */
  function accept(delivery: Delivery, event: ParsedWebhook, timeoutMs: number | undefined): WebhookResponse {
    const { error, known, rawBody } = delivery;
    const text = typeof rawBody === 'string' ? rawBody : undefined;
    const work = error
      ? () => dispatcher.report(error)
      : () => {
          const context = new FirstRunContext(() => keyOf(event, delivery.bytes ?? rawBody), Date.now());
          return settled(dispatcher.dispatch(event, known, text, timeoutMs, context));
        };
    return later(200, 'OK', TEXT, new Job(event, work, inFlight));
  }

  /** Stores the event in the inbox (or forwards it), then answers: 200, 200 for a duplicate, or 503. */
  function commit(target: Inbox, delivery: Delivery, event: ParsedWebhook): Promise<WebhookResponse> {
    const rawBody = textOf(delivery.rawBody);
    // Without stable text, only a documented key can recognise a repeat; the body digest must not merge events.
    const key = keyOf(event, delivery.unserializable ? randomUUID() : (delivery.bytes ?? rawBody));
    const receivedAt = Date.now();
    return intake.store(target, { key, trigger: event.trigger, event, rawBody, receivedAt }).then(
      (result) => (result === 'stored' ? OK : duplicate(event, { key, receivedAt })),
      (cause: unknown) => refuse(commitFailure(cause, event, rawBody), RETRY_LATER),
    );
  }

  /** Answers a repeat 200; onDuplicate handlers run after the response. */
  function duplicate(event: ParsedWebhook, context: DuplicateContext): WebhookResponse {
    logger.debug?.({ trigger: event.trigger, key: context.key }, 'Ignored a repeated delivery.');
    if (duplicateHandlers.size === 0) return OK;
    return later(200, 'OK', TEXT, new Job(event, () => runDuplicateHandlers(event, context), inFlight));
  }

  function runDuplicateHandlers(event: ParsedWebhook, context: DuplicateContext): Promise<void> | undefined {
    const pending: Promise<unknown>[] = [];
    for (const handler of duplicateHandlers) {
      const failed = (cause: unknown) =>
        dispatcher.report(new WebhookError('handler_failed', `An onDuplicate handler failed: ${String(cause)}`, { cause, event }));
      try {
        const result = handler(event, context);
        if (isThenable(result)) pending.push(Promise.resolve(result).catch(failed));
      } catch (cause) {
        const reporting = failed(cause);
        if (reporting) pending.push(reporting);
      }
    }
    return pending.length > 0 ? Promise.all(pending).then(() => undefined) : undefined;
  }

  function forwarder(enqueue: Enqueue): Inbox {
    let forwarding = forwarders.get(enqueue);
    if (!forwarding) forwarders.set(enqueue, (forwarding = forwardingInbox(enqueue)));
    return forwarding;
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

    // An invalid payload is never stored: it goes to onError here.
    const target = error ? undefined : options.enqueue ? forwarder(options.enqueue) : inbox;
    if (target) return commit(target, delivery, event);

    // Without stable text there is nothing to recognise a repeat by: such a delivery is never taken for one.
    const content = delivery.unserializable ? undefined : (delivery.bytes ?? delivery.rawBody);
    if (dedupe && content !== undefined && !dedupe.add(content)) {
      logger.debug?.({ trigger: event.trigger }, 'Ignored a repeated delivery.');
      return duplicateHandlers.size === 0 ? OK : duplicate(event, { key: keyOf(event, content), receivedAt: Date.now() });
    }
    return accept(delivery, event, options.handlerTimeoutMs);
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
    ...registrationMethods<Webhooks>(dispatcher),
    onDuplicate(handler) {
      duplicateHandlers.add(handler);
      return this;
    },
    receive(event, context = {}) {
      let outcome: Outcome = [];
      const run = new FirstRunContext(() => context.key ?? keyOf(event), context.receivedAt ?? Date.now());
      const full: HandlerContext = context.attempt === undefined ? run : { key: run.key, attempt: context.attempt, receivedAt: run.receivedAt };
      const work = () => {
        const result = dispatcher.dispatch(event, isKnownTrigger(event.trigger), undefined, undefined, full);
        if (!isThenable(result)) return void (outcome = result);
        return result.then((failures) => void (outcome = failures));
      };
      const job = new Job(event, work, inFlight);
      defer(job);
      return job.done.then(() => ({ ok: outcome.length === 0, failures: outcome }));
    },
    handle: (request, options) => new Promise((resolve) => respond(request, resolve, options)),
    respond,
    async close({ timeoutMs = 10_000 }: CloseOptions = {}) {
      closing = true;
      // The worker finishes the events it holds (each bounded by handlerTimeoutMs); the rest wait in the inbox.
      await consumer?.close();
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

/** A dispatch's outcome as job work: nothing to wait for when it finished synchronously. */
function settled(outcome: Outcome | Promise<Outcome>): Promise<void> | undefined {
  return isThenable(outcome) ? (outcome as Promise<Outcome>).then(() => undefined) : undefined;
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

