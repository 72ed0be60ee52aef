/**
 * The hook points the receiver and the worker call when `telemetry` is given (and only then: without it, the
 * receive path checks one `undefined` and goes on). They depend on nothing: `openTelemetry()`
 * (src/telemetry/otel/otel.ts, `chat-webhooks/otel`) implements them on the OpenTelemetry API, and another
 * implementation (a StatsD client, a test probe) can too.
 *
 * Nothing given to a hook is sensitive beyond what it says: the receiver hands over the method, the
 * `traceparent`/`x-forwarded-proto` headers it is asked for, the event (whose trigger the implementation may
 * record; `recordBodies` governs anything more), and digests: of the idempotency key, of any text it asks.
 */
import type { ParsedWebhook } from '../events/index.js';

/** A handler failure as hooks see it: its WebhookError code (`handler_failed`, `handler_timeout`, …). */
export interface FailureLike {
  readonly code: string;
}

/** The failures of one run of an event's handlers; empty when every handler succeeded. */
export type HandlersOutcome = readonly FailureLike[];

/** What the receiver tells about one request, from its arrival to its answer. */
export interface RequestTelemetry {
  /**
   * The body parsed to an event. `keyDigest` computes a digest of its idempotency key (never the key);
   * `digest` one of any text (a conversation id holds user ids).
   */
  parsed(event: ParsedWebhook, keyDigest: () => string, digest: (text: string) => string): void;
  /** The event was a repeat, answered 200 without running handlers. */
  duplicate(): void;
  /** A commit to the inbox (or an `enqueue`) begins; its `traceparent` is stored with the entry. */
  commit(inbox: string): CommitTelemetry;
  /** Runs the event's handlers in this process (no inbox): `run`'s outcome is returned as is. */
  handlers<T extends HandlersOutcome>(trigger: string, run: () => T | Promise<T>): T | Promise<T>;
  /** The answer was handed to the adapter; `reason` is the refusal's WebhookError code, when it has one. */
  answered(status: number, reason: string | undefined): void;
}

export interface CommitTelemetry {
  /** The W3C `traceparent` to store with the entry, so that the worker's span can link to it. */
  readonly traceparent: string | undefined;
  /** The commit's outcome: stored, a duplicate, or failed (`error`). */
  end(result: 'stored' | 'duplicate' | undefined, error?: unknown): void;
}

/** What a worker tells about one attempt at a stored event. */
export interface AttemptTelemetry {
  /** Runs the handlers within the attempt (its span is the current one meanwhile). */
  run<T>(handlers: () => T): T;
  /** The attempt's outcome; `final` when no retry follows (a failed final attempt makes the event dead). */
  end(failures: HandlersOutcome, final: boolean): void;
}

/** A claimed entry, as much of it as telemetry may see. */
export interface AttemptInfo {
  readonly event: ParsedWebhook;
  readonly trigger: string;
  readonly attempt: number;
  readonly traceparent?: string;
  readonly keyDigest: () => string;
  readonly digest: (text: string) => string;
}

/** The part of an inbox the gauges read, once per collection (never on the request path). */
export interface ObservedInbox {
  readonly kind: string;
  stats(): Promise<{ pending: number; running: number; dead: number }>;
  oldestPendingAt?(): Promise<number | undefined>;
}

/** What a reconcile run (chat-webhooks/reconcile) is: its window and the envelope parts it rebuilds with. */
export interface ReconcileInfo {
  /** Epoch milliseconds, both ends included. */
  readonly since: number;
  readonly until: number;
  readonly appId: string;
  readonly webhook: string;
}

export type ReconcileOutcome = 'recovered' | 'duplicate' | 'skipped';

/** One reconcile run. */
export interface ReconcileTelemetry {
  /** `count` events of one outcome, as the run goes (`skipped` holds the receiver's refusals too). */
  counted(outcome: ReconcileOutcome, count: number): void;
  /** The run ended with these figures (`listed`, `recovered`, …); `error` when it stopped on one. */
  end(figures: Readonly<Record<string, number>>, error?: unknown): void;
}

/** What `createWebhooks({ telemetry })` and `createWorker({ telemetry })` take. */
export interface Telemetry {
  /**
   * One request arrived. `header` reads a request header (lower-case name); `route` is the route the
   * adapter matched, where it knows one.
   */
  request(method: string, header: (name: string) => string | undefined, route: string | undefined): RequestTelemetry;
  /** A worker claimed an entry and is about to run its handlers. */
  attempt(inbox: string, info: AttemptInfo): AttemptTelemetry;
  /** An event whose last attempt was cut off was made dead without running (the worker died on it). */
  dead(inbox: string, trigger: string): void;
  /** Starts reading the inbox's gauges; the returned function stops it (at close). */
  observe(inbox: ObservedInbox): () => void;
  /** A reconcile run began (`reconcile({ telemetry })`); a telemetry without this method sees none. */
  reconcile?(info: ReconcileInfo): ReconcileTelemetry;
}
