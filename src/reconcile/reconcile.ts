/**
 * `reconcile`: recovers the events of a window that never reached the receiver (an outage longer than the
 * platform's retries), from the platform's list of messages. Each message it can rebuild goes through the
 * receiver as a delivery would (`webhooks.redeliver`), with the same key: one delivered already is a duplicate
 * and runs nothing, a missed one runs once (or is stored for the workers). The report says which.
 */
import type { ChatClient } from '../api/index.js';
import type { Webhooks } from '../receive/index.js';
import type { ReconcileTelemetry, Telemetry } from '../telemetry/hooks.js';
import { rebuild, type EnvelopeParts } from './rebuild.js';
import { walkMessages } from './walk.js';

export interface ReconcileOptions extends EnvelopeParts {
  /** The receiver from `createWebhooks(...)`: its inbox or window, handlers and onDuplicate take the events. */
  webhooks: Pick<Webhooks, 'redeliver'>;
  /** A client from `createChatClient(...)` (chat-webhooks/api). */
  chat: Pick<ChatClient, 'messages'>;
  /** Start of the window: a Date or epoch milliseconds (included). */
  since: Date | number;
  /** End of the window (included). @defaultValue now */
  until?: Date | number;
  /** Stops the walk: reconcile rejects with the signal's reason (or the client's `aborted` ApiError). */
  signal?: AbortSignal;
  /** Called after each page with the figures so far. */
  onProgress?(report: Readonly<ReconcileReport>): void;
  /** `openTelemetry()` (chat-webhooks/otel), as the receiver's: a span per run, `chat_webhooks.reconciled` by outcome. */
  telemetry?: Telemetry;
}

export interface ReconcileReport {
  /** Messages of the window the list returned (each once: repeats at page edges dropped). */
  listed: number;
  /** Events that had not reached the receiver: handled now, or stored in its inbox for the workers. */
  recovered: number;
  /** Events the receiver already had (delivered by webhook, or recovered by an earlier run): nothing ran. */
  duplicates: number;
  /** Messages not rebuilt as an event (see `skippedByKind`), or refused by the receiver (`refused:<code>`). */
  skipped: number;
  /** Pages read. */
  pages: number;
  /** 429 answers waited out. */
  throttled: number;
  /** `skipped` by the kind of message: `call:audio:ended`, `action:groupMember:joined`, `refused:invalid_payload`. */
  skippedByKind: Record<string, number>;
}

/**
 * @example
 * ```ts
 * import { reconcile } from 'chat-webhooks/reconcile';
 *
 * const report = await reconcile({ webhooks, chat, appId, region: 'eu', webhook: 'wh_chat_events', since: Date.now() - 3_600_000 });
 * console.log(`${report.recovered} recovered, ${report.duplicates} already had`);
 * ```
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const window = windowOf(options);
  const run = options.telemetry?.reconcile?.({ ...window, appId: options.appId, webhook: options.webhook });
  const report: ReconcileReport = { listed: 0, recovered: 0, duplicates: 0, skipped: 0, pages: 0, throttled: 0, skippedByKind: {} };
  try {
    await walkWindow(options, window, report, run);
  } catch (error) {
    run?.end(figuresOf(report), error);
    throw error;
  }
  run?.end(figuresOf(report));
  return report;
}

async function walkWindow(options: ReconcileOptions, window: { since: number; until: number }, report: ReconcileReport, run: ReconcileTelemetry | undefined): Promise<void> {
  const { webhooks, signal } = options;
  const parts: EnvelopeParts = { appId: options.appId, region: options.region, webhook: options.webhook };
  const onPage = (pages: number, throttled: number) => {
    Object.assign(report, { pages, throttled });
    options.onProgress?.(report);
  };
  const walk = walkMessages(options.chat, { fromSecond: Math.floor(window.since / 1000), toSecond: Math.floor(window.until / 1000), signal, onPage });
  let batch: string[] = [];
  try {
    for await (const message of walk) {
      const sentAt = message.sentAt * 1000;
      // The list answers by whole seconds: a window's millisecond ends are applied here. A message of the
      // window's first second may have been sent after `since` within it: kept (a duplicate at worst).
      if (sentAt + 999 < window.since || sentAt > window.until) continue;
      report.listed++;
      const rebuilt = rebuild(message, parts);
      if ('kind' in rebuilt) {
        skip(report, rebuilt.kind);
        run?.counted('skipped', 1);
      } else if (batch.push(rebuilt.body) === IN_FLIGHT) {
        const full = batch;
        batch = [];
        await redeliverAll(webhooks, full, report, signal, run);
      }
    }
  } catch (error) {
    // A list that fails on a later page: the events already listed are still handed over (unless the caller
    // stopped the run), so the report's `listed` are all either recovered, duplicates or skipped.
    if (!signal?.aborted) await redeliverAll(webhooks, batch, report, signal, run);
    throw error;
  }
  await redeliverAll(webhooks, batch, report, signal, run);
}

/** The report's whole numbers, for the run's span. */
function figuresOf({ skippedByKind: _, ...figures }: ReconcileReport): Record<string, number> {
  return figures;
}

/**
 * Events handed to the receiver together, as deliveries arrive together: an inbox commits them in one
 * transaction (a turn's puts), where one at a time waited for a commit each. Their handlers may run in any
 * order, as concurrent deliveries' do.
 */
const IN_FLIGHT = 64;

async function redeliverAll(
  webhooks: ReconcileOptions['webhooks'],
  bodies: string[],
  report: ReconcileReport,
  signal: AbortSignal | undefined,
  run: ReconcileTelemetry | undefined,
): Promise<void> {
  if (signal?.aborted) throw signal.reason;
  const results = await Promise.all(bodies.map((body) => webhooks.redeliver(body, { source: 'reconcile' })));
  const before = { recovered: report.recovered, duplicates: report.duplicates, skipped: report.skipped };
  for (const result of results) {
    if (result.outcome === 'duplicate') report.duplicates++;
    else if (result.outcome !== 'refused') report.recovered++;
    else if (result.status < 500) skip(report, `refused:${result.code ?? result.status}`);
  }
  run?.counted('recovered', report.recovered - before.recovered);
  run?.counted('duplicate', report.duplicates - before.duplicates);
  run?.counted('skipped', report.skipped - before.skipped);
  // An inbox that cannot store, or a receiver shutting down: the rest of the window would be lost too.
  const failed = results.find((result) => result.status >= 500);
  if (failed) throw new ReconcileError(`The receiver answered ${failed.status} (${failed.code ?? 'unavailable'}); stopped after ${report.listed} messages.`, report);
}

/** The receiver could not take an event (its inbox failed, or it is closing): `report` holds the figures so far. */
export class ReconcileError extends Error {
  override readonly name = 'ReconcileError';
  constructor(
    message: string,
    readonly report: Readonly<ReconcileReport>,
  ) {
    super(message);
  }
}

/** Distinct kinds `skippedByKind` names; the rest are counted as `other`. */
const MAX_KINDS = 50;
/** A kind is cut to this many characters (the list's own `category` and `type` strings make it). */
const MAX_KIND_LENGTH = 64;

function skip(report: ReconcileReport, kind: string): void {
  report.skipped++;
  // A list whose every message has a kind of its own (or a kind of a megabyte) would grow the report without end.
  let name = kind.length > MAX_KIND_LENGTH ? `${kind.slice(0, MAX_KIND_LENGTH)}…` : kind;
  const kinds = report.skippedByKind;
  if (!Object.hasOwn(kinds, name) && Object.keys(kinds).length >= MAX_KINDS) name = 'other';
  // Own properties only: a message of category `constructor` or `__proto__` is a count like any other.
  const count = Object.hasOwn(kinds, name) ? (kinds[name] as number) : 0;
  Object.defineProperty(kinds, name, { value: count + 1, enumerable: true, writable: true, configurable: true });
}

function windowOf(options: ReconcileOptions): { since: number; until: number } {
  const since = epochMs(options.since, 'since');
  const until = options.until === undefined ? Date.now() : epochMs(options.until, 'until');
  if (until < since) throw new RangeError(`reconcile: until (${new Date(until).toISOString()}) is before since (${new Date(since).toISOString()}).`);
  for (const part of ['appId', 'region', 'webhook'] as const) {
    if (typeof options[part] !== 'string' || options[part] === '') throw new TypeError(`reconcile: ${part} is the envelope's ${part}, a non-empty string (part of every key).`);
  }
  return { since, until };
}

function epochMs(value: Date | number, name: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError(`reconcile: ${name} is a Date or epoch milliseconds.`);
  return ms;
}
