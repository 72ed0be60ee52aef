/**
 * `openTelemetry()` (`chat-webhooks/otel`): the telemetry hooks (src/telemetry/hooks.ts) on the OpenTelemetry
 * API, following its semantic conventions for HTTP servers and messaging:
 *
 *   request ─ SERVER "POST /webhooks" ─┬─ PRODUCER "send sqlite" (its traceparent stored with the entry)
 *                                      └─ INTERNAL "handle message_sent" (no inbox: the handlers, after the 200)
 *   worker ── CONSUMER "process sqlite" (one per attempt, a new trace LINKED to the stored producer context)
 *
 * `@opentelemetry/api` is an optional peer dependency that only this file imports. Without an SDK registered
 * (and without providers given), the API's no-op tracer and meter make every call here nearly free.
 */
import type * as OpenTelemetryApi from '@opentelemetry/api';
import type {
  Attributes,
  Context,
  Counter,
  Histogram,
  Link,
  Meter,
  MeterProvider,
  ObservableGauge,
  Span,
  SpanContext,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api';
import { requirePeers } from '#platform';
import { isKnownTrigger } from '../../events/index.js';
import type { AttemptInfo, AttemptTelemetry, CommitTelemetry, HandlersOutcome, ObservedInbox, RequestTelemetry, Telemetry } from '../hooks.js';
import type { ParsedWebhook } from '../../events/index.js';
import { reconcileRuns } from './reconcile-trace.js';

// Loaded as this module is, as the stores load theirs: without it, importing chat-webhooks/otel says what to
// install (`chat-webhooks/otel needs its optional peer @opentelemetry/api: npm install @opentelemetry/api`),
// not Node's "Cannot find package". Like them, it then runs on Node.js, Bun and Deno.
const [{ context, metrics, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace }] = requirePeers('chat-webhooks/otel', ['@opentelemetry/api']) as [
  typeof OpenTelemetryApi,
];

export interface OpenTelemetryOptions {
  /** Where spans go. Default: the global one (`trace.setGlobalTracerProvider`, an SDK's `register()`). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global one (`metrics.setGlobalMeterProvider`). */
  meterProvider?: MeterProvider;
  /**
   * Record each event as JSON (`chat_webhooks.event`, at most 8 KiB) on its server and consumer spans. Events
   * hold user ids and message text: keep it off in production unless your trace store may hold them.
   * @defaultValue false
   */
  recordBodies?: boolean;
  /**
   * `http.route` (and the server span's name) where the adapter does not know its route: an Express mount
   * (`app.use('/hooks/:app', …)`), or node, fetch and Lambda without `path`. A template, never a request's path.
   */
  route?: string;
}

const NAME = 'chat-webhooks';
const VERSION = '0.1.0';
const MESSAGING_SYSTEM = 'chat_webhooks';
const MAX_RECORDED_BODY = 8 * 1024;
/** The HTTP semantic conventions' buckets for request durations, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);
/** W3C Trace Context: version 00 is exactly these 55 characters; a later version may add fields after a `-`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The instruments, made once per `openTelemetry()` call. */
interface Instruments {
  requestDuration: Histogram;
  deliveries: Counter;
  handlerDuration: Histogram;
  handlerFailures: Counter;
  dead: Counter;
  commitDuration: Histogram;
  entries: ObservableGauge;
  oldestPendingAge: ObservableGauge;
}

function instruments(meter: Meter): Instruments {
  const seconds = (name: string, description: string): Histogram =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  return {
    requestDuration: seconds('http.server.request.duration', 'Duration of webhook requests, from arrival to the answer.'),
    deliveries: meter.createCounter('chat_webhooks.deliveries', {
      unit: '{delivery}',
      description: 'Deliveries answered, by outcome (accepted, duplicate, refused) and, for refusals, reason.',
    }),
    handlerDuration: seconds('chat_webhooks.handler.duration', "Duration of one run of an event's handlers."),
    handlerFailures: meter.createCounter('chat_webhooks.handler.failures', {
      unit: '{failure}',
      description: 'Handler failures, by trigger, error.type, and whether no retry follows (final).',
    }),
    dead: meter.createCounter('chat_webhooks.dead', { unit: '{event}', description: 'Events made dead after their last attempt.' }),
    commitDuration: seconds('chat_webhooks.inbox.commit.duration', 'Duration of storing a delivery in the inbox.'),
    entries: meter.createObservableGauge('chat_webhooks.inbox.entries', {
      unit: '{entry}',
      description: 'Entries in the inbox, by state (pending, running, dead).',
    }),
    oldestPendingAge: meter.createObservableGauge('chat_webhooks.inbox.oldest_pending_age', {
      unit: 's',
      description: 'How long ago the oldest pending entry was received.',
    }),
  };
}

/** A W3C traceparent's span context; undefined for anything else (a header is the sender's to write). */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  const match = header === undefined ? null : TRACEPARENT.exec(header.trim());
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return undefined;
  if (/^0+$/.test(match[2] as string) || /^0+$/.test(match[3] as string)) return undefined;
  return { traceId: match[2] as string, spanId: match[3] as string, traceFlags: parseInt(match[4] as string, 16) & 1, isRemote: true };
}

/** A span's context as a W3C traceparent; undefined for a span that is not recorded anywhere. */
export function formatTraceparent(span: Span): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return undefined;
  return `00-${traceId}-${spanId}-0${(traceFlags & 1).toString(16)}`;
}

/** Unknown triggers are the sender's to name: one value for all of them keeps attributes low-cardinality. */
const triggerOf = (trigger: string): string => (isKnownTrigger(trigger) ? trigger : '_OTHER');

/** The conversation an event's record belongs to, where it names one. */
function conversationOf(event: ParsedWebhook): string | undefined {
  // An event given to `receive` was not checked as a delivery's is: its data may be anything, or nothing.
  const data = event.data as unknown;
  if (!data) return undefined;
  for (const record of Object.values(data)) {
    const id = (record as { conversationId?: unknown } | null)?.conversationId;
    if (typeof id === 'string' && id !== '') return id;
  }
  return undefined;
}

/** What a span may say about an event: its trigger, and digests of its conversation and key. */
function eventAttributes(event: ParsedWebhook, keyDigest: () => string, digest: (text: string) => string, recordBodies: boolean): Attributes {
  const conversation = conversationOf(event);
  const attributes: Attributes = {
    'chat_webhooks.trigger': triggerOf(event.trigger),
    'chat_webhooks.idempotency_key.digest': keyDigest(),
  };
  // A one-to-one conversation's id is made of the two users' ids: a digest still groups its spans.
  if (conversation !== undefined) attributes['messaging.message.conversation_id'] = digest(conversation);
  if (recordBodies) attributes['chat_webhooks.event'] = JSON.stringify(event).slice(0, MAX_RECORDED_BODY);
  return attributes;
}

const seconds = (startedAt: number): number => (performance.now() - startedAt) / 1000;

function endWithFailures(span: Span, failures: HandlersOutcome): void {
  const first = failures[0];
  if (first) {
    span.setAttribute('error.type', first.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${failures.length} handler(s) failed` });
  }
  span.end();
}

/**
 * Creates the telemetry to pass as `createWebhooks({ telemetry })` and `createWorker({ telemetry })`.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { openTelemetry } from 'chat-webhooks/otel';
 *
 * // The global tracer and meter providers, as an SDK's register() sets them.
 * const webhooks = createWebhooks({ auth: { username: 'app', password: 's3cret' }, telemetry: openTelemetry() });
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Telemetry {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME, VERSION);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(NAME, VERSION);
  const recordBodies = options.recordBodies === true;
  const used = instruments(meter);
  const observed = new InboxGauges(meter, used);
  const handlers = new HandlerRuns(tracer, used);
  return {
    request: (method, header, route) => new RequestTrace(tracer, used, handlers, recordBodies, method, header, route ?? options.route),
    attempt: (inbox, info) => handlers.attempt(inbox, info, recordBodies),
    dead: (inbox, trigger) => used.dead.add(1, { 'chat_webhooks.inbox': inbox, 'chat_webhooks.trigger': triggerOf(trigger) }),
    observe: (inbox) => observed.add(inbox),
    reconcile: reconcileRuns({ SpanKind, SpanStatusCode }, tracer, meter),
  };
}

/** Handler runs: in this process after the answer (no inbox), or a worker's attempts at stored events. */
class HandlerRuns {
  constructor(
    private readonly tracer: Tracer,
    private readonly used: Instruments,
  ) {}

  /** The handlers of an accepted event, as a child of its request's span. */
  inRequest<T extends HandlersOutcome>(parent: Context, trigger: string, run: () => T | Promise<T>): T | Promise<T> {
    const span = this.tracer.startSpan(`handle ${triggerOf(trigger)}`, { kind: SpanKind.INTERNAL, attributes: { 'chat_webhooks.trigger': triggerOf(trigger) } }, parent);
    const startedAt = performance.now();
    const ended = (failures: T): T => {
      this.ended(trigger, undefined, startedAt, failures, true);
      endWithFailures(span, failures);
      return failures;
    };
    const outcome = context.with(trace.setSpan(parent, span), run);
    return outcome instanceof Promise ? outcome.then(ended) : ended(outcome);
  }

  attempt(inbox: string, info: AttemptInfo, recordBodies: boolean): AttemptTelemetry {
    const stored = parseTraceparent(info.traceparent);
    const links: Link[] = stored ? [{ context: stored }] : [];
    const attributes: Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': inbox,
      'chat_webhooks.attempt': info.attempt,
      ...eventAttributes(info.event, info.keyDigest, info.digest, recordBodies),
    };
    // A new trace, linked to the delivery's: the conventions' way for a message processed later.
    const span = this.tracer.startSpan(`process ${inbox}`, { kind: SpanKind.CONSUMER, root: true, links, attributes });
    const startedAt = performance.now();
    return {
      run: (handlers) => context.with(trace.setSpan(context.active(), span), handlers),
      end: (failures, final) => {
        this.ended(info.trigger, inbox, startedAt, failures, final);
        if (final && failures.length > 0) this.used.dead.add(1, { 'chat_webhooks.inbox': inbox, 'chat_webhooks.trigger': triggerOf(info.trigger) });
        endWithFailures(span, failures);
      },
    };
  }

  /** A run's duration and failures; `inbox` is absent for handlers run without one. */
  ended(trigger: string, inbox: string | undefined, startedAt: number, failures: HandlersOutcome, final: boolean): void {
    const base: Attributes = { 'chat_webhooks.trigger': triggerOf(trigger), ...(inbox ? { 'chat_webhooks.inbox': inbox } : {}) };
    this.used.handlerDuration.record(seconds(startedAt), { ...base, 'chat_webhooks.outcome': failures.length === 0 ? 'success' : 'failure' });
    const codes = new Set(failures.map((failure) => failure.code));
    for (const code of codes) {
      const count = failures.filter((failure) => failure.code === code).length;
      this.used.handlerFailures.add(count, { ...base, 'error.type': code, 'chat_webhooks.final': final });
    }
  }
}

/** One request: its SERVER span, from arrival to the answer, and what it tells of its event and commit. */
class RequestTrace implements RequestTelemetry {
  readonly #span: Span;
  readonly #context: Context;
  readonly #startedAt = performance.now();
  readonly #attributes: Attributes;
  #trigger: string | undefined;
  #duplicate = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly used: Instruments,
    private readonly runs: HandlerRuns,
    private readonly recordBodies: boolean,
    method: string,
    header: (name: string) => string | undefined,
    route: string | undefined,
  ) {
    const upper = method.toUpperCase();
    const known = KNOWN_METHODS.has(upper) ? upper : '_OTHER';
    const scheme = header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    this.#attributes = {
      'http.request.method': known,
      'url.scheme': scheme === 'https' ? 'https' : 'http',
      ...(route ? { 'http.route': route } : {}),
    };
    // A proxy's traceparent is the parent, unless a span is already current (an HTTP instrumentation's).
    const active = context.active();
    const remote = trace.getSpan(active) ? undefined : parseTraceparent(header('traceparent'));
    const parent = remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : active;
    // The conventions' name: `{method} {route}`, where a method they do not know (`_OTHER`) is said `HTTP`.
    const verb = known === '_OTHER' ? 'HTTP' : known;
    const name = route ? `${verb} ${route}` : verb;
    this.#span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: this.#attributes }, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  parsed(event: ParsedWebhook, keyDigest: () => string, digest: (text: string) => string): void {
    this.#trigger = triggerOf(event.trigger);
    if (this.#span.isRecording()) this.#span.setAttributes(eventAttributes(event, keyDigest, digest, this.recordBodies));
  }

  duplicate(): void {
    this.#duplicate = true;
  }

  commit(inbox: string): CommitTelemetry {
    return commitTrace(this.tracer, this.#context, this.used, inbox);
  }

  handlers<T extends HandlersOutcome>(trigger: string, run: () => T | Promise<T>): T | Promise<T> {
    return this.runs.inRequest(this.#context, trigger, run);
  }

  answered(status: number, reason: string | undefined): void {
    const span = this.#span;
    const errorType = status >= 400 ? (reason ?? String(status)) : undefined;
    span.setAttribute('http.response.status_code', status);
    if (errorType) span.setAttribute('error.type', errorType);
    // The conventions: a 4xx is the client's error, not the server span's; a 5xx is.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    const attributes: Attributes = { ...this.#attributes, 'http.response.status_code': status, ...(errorType ? { 'error.type': errorType } : {}) };
    this.used.requestDuration.record(seconds(this.#startedAt), attributes);
    const outcome = status >= 400 ? 'refused' : this.#duplicate ? 'duplicate' : 'accepted';
    this.used.deliveries.add(1, {
      'chat_webhooks.outcome': outcome,
      ...(errorType ? { 'chat_webhooks.reason': errorType } : {}),
      ...(this.#trigger ? { 'chat_webhooks.trigger': this.#trigger } : {}),
    });
  }
}

/** The PRODUCER span around one commit; its context is what the entry carries to the worker. */
function commitTrace(tracer: Tracer, parent: Context, used: Instruments, inbox: string): CommitTelemetry {
  const attributes: Attributes = {
    'messaging.system': MESSAGING_SYSTEM,
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.destination.name': inbox,
  };
  const span = tracer.startSpan(`send ${inbox}`, { kind: SpanKind.PRODUCER, attributes }, parent);
  const startedAt = performance.now();
  return {
    traceparent: formatTraceparent(span),
    end(result, error) {
      const outcome = result ?? 'failed';
      if (!result) {
        span.setAttribute('error.type', error instanceof Error && error.name !== 'Error' ? error.name : 'inbox_failed');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.setAttribute('chat_webhooks.commit.outcome', outcome);
      span.end();
      used.commitDuration.record(seconds(startedAt), { 'chat_webhooks.inbox': inbox, 'chat_webhooks.outcome': outcome });
    },
  };
}

/**
 * The inbox gauges: one callback per collection reads every observed inbox once (its counts, and its oldest
 * pending entry where the inbox can tell), never on the request path. An inbox observed twice (a receiver
 * and a worker in one process) is read once.
 */
class InboxGauges {
  readonly #inboxes = new Map<ObservedInbox, number>();
  #registered = false;

  constructor(
    private readonly meter: Meter,
    private readonly used: Instruments,
  ) {}

  add(inbox: ObservedInbox): () => void {
    this.#inboxes.set(inbox, (this.#inboxes.get(inbox) ?? 0) + 1);
    if (!this.#registered) {
      this.#registered = true;
      this.meter.addBatchObservableCallback((result) => this.#collect(result), [this.used.entries, this.used.oldestPendingAge]);
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      // Still there: only this observer's own stop, once, takes its count back.
      const count = (this.#inboxes.get(inbox) as number) - 1;
      if (count > 0) this.#inboxes.set(inbox, count);
      else this.#inboxes.delete(inbox);
    };
  }

  async #collect(result: { observe(gauge: ObservableGauge, value: number, attributes?: Attributes): void }): Promise<void> {
    const { entries, oldestPendingAge } = this.used;
    await Promise.all(
      [...this.#inboxes.keys()].map(async (inbox) => {
        const attributes = { 'chat_webhooks.inbox': inbox.kind };
        // An inbox that cannot answer now is left out of this collection; health() is what reports it.
        const read = await Promise.all([inbox.stats(), inbox.oldestPendingAt?.()]).catch(() => undefined);
        if (!read) return;
        const [stats, oldest] = read;
        for (const state of ['pending', 'running', 'dead'] as const) {
          result.observe(entries, stats[state], { ...attributes, 'chat_webhooks.inbox.state': state });
        }
        if (inbox.oldestPendingAt) result.observe(oldestPendingAge, oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000), attributes);
      }),
    );
  }
}
