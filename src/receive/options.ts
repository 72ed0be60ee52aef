/**
 * The receiver's options: their documentation, their checks (a mistake throws a `ConfigurationError` when
 * the receiver is created, never on a request) and their defaults, resolved once into `Settings`.
 */
import { createCredentialCheck, type Admitted, type BasicAuthOption } from './auth/auth.js';
import { DedupeWindow, MAX_DEDUPE_KEYS, type DedupeOptions } from './intake/dedupe.js';
import type { ParsedWebhook } from '../events/index.js';
import { INBOX_CHOICES, type Inbox } from '../delivery/port.js';
import { WORKER_OPTIONS, type WorkerOptions } from '../delivery/consume.js';
import { ConfigurationError } from '../dispatch/errors.js';
import { rejectUnknownOptions } from '../dispatch/unknown-options.js';
import { keyFunctions, type IdempotencyKeys, type KeyFunctions } from './idempotency.js';
import { leveled, type LogLevel, type WebhookLogger } from '../dispatch/logger.js';
import type { Telemetry } from '../telemetry/hooks.js';
import { checkTelemetry } from '../dispatch/attempts.js';
import { canCoordinate } from '../delivery/port.js';
import { isCatchUp, type CatchUp } from './catch-up.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;
export const DEFAULT_COMMIT_TIMEOUT_MS = 2000;
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

export interface WebhooksOptions {
  /**
   * The Basic credentials configured on the platform's webhook (`useBasicAuth`, `username`, `password`), or
   * a list while rotating (any of them is accepted). Turning authentication off takes an explicit `false`.
   * A receiver serving several apps binds each credential to its app(s) with `appId`: a delivery whose
   * envelope `appId` is not one its credentials allow (or has none) is refused 403 (`app_mismatch`), so one
   * app's password cannot deliver another app's events. Entries without `appId` deliver for any app.
   * @example { username: process.env.WEBHOOK_USER, password: process.env.WEBHOOK_PASSWORD }
   * @example [{ username: 'platform', password: 'old' }, { username: 'platform', password: 'new' }]
   * @example [{ username: 'acme', password: ACME_PASSWORD, appId: 'app-acme' }, { username: 'globex', password: GLOBEX_PASSWORD, appId: ['app-globex', 'app-globex-eu'] }]
   */
  auth: BasicAuthOption | false;
  /**
   * Bodies larger than this many bytes are answered 413 without being read further.
   * @defaultValue 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * A body not complete this many milliseconds after its headers passed the checks is answered 408 with
   * `Connection: close`, so trickling or stalled senders cannot hold sockets open. `0` or `Infinity`: no limit.
   * @defaultValue 10000
   */
  bodyTimeoutMs?: number;
  /**
   * What to answer when a known trigger's `data` fails its schema. The error goes to onError either way;
   * `'accept'` answers 200 so the platform does not retry a payload that will never pass, `'reject'` 400.
   * @defaultValue 'accept'
   */
  invalidPayload?: 'accept' | 'reject';
  /**
   * Without an inbox: repeats of an event within the window are answered 200 without running the handlers
   * again (in this process's memory). A repeat is the same idempotency key (see `idempotencyKeys`): the
   * documented fields where the trigger has them, else the exact body. `false` turns this off. With an
   * inbox, the inbox's window decides, by the same keys.
   * @defaultValue { windowMs: 600000, maxKeys: 10000 }
   * @example { windowMs: 60 * 60 * 1000, maxKeys: 50_000 }
   */
  dedupe?: DedupeOptions | false;
  /**
   * A handler still running after this many milliseconds is reported to onError (`handler_timeout`); it is
   * not stopped. `0` turns the limit off.
   * @defaultValue 30000
   */
  handlerTimeoutMs?: number;
  /**
   * Store each event in this inbox before answering 200. A duplicate within the inbox's window is answered
   * 200 and reaches onDuplicate only; a failed or slow commit is answered 503 with Retry-After and reaches
   * onError (`inbox_failed`). See the [durable delivery guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/durable-delivery.md).
   * @example sqliteInbox({ path: './.data/inbox.db' })
   */
  inbox?: Inbox;
  /**
   * With an inbox: run the handlers in this process (an in-process worker); `false` only receives, and
   * workers elsewhere (`createWorker`) handle the events.
   * @defaultValue true
   */
  consume?: boolean;
  /**
   * With an inbox and `consume`: the in-process worker's settings (see `createWorker`).
   * @example { concurrency: 16, retry: { attempts: 8 }, leaseMs: 60_000 }
   */
  worker?: Omit<WorkerOptions, 'inbox' | 'logger' | 'handlerTimeoutMs' | 'closeInbox' | 'telemetry'>;
  /**
   * With an inbox: `close()` closes it once no other receiver or worker of this process uses it, so that
   * nothing keeps the process alive after it (Redis sockets, a database pool). `false`: the inbox stays open
   * and you close it (`await inbox.close()`).
   * @defaultValue true
   */
  closeInbox?: boolean;
  /**
   * With an inbox: a commit that takes longer is answered 503 (the platform waits about 2 s per delivery).
   * @defaultValue 2000
   */
  commitTimeoutMs?: number;
  /**
   * Per-trigger idempotency keys replacing the documented ones; what a function returns goes after
   * `<appId>:<webhook id>:<trigger>:`. See the [durable delivery guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/durable-delivery.md#idempotency-keys).
   * @example { message_sent: (event) => event.data.message.id }
   */
  idempotencyKeys?: IdempotencyKeys;
  /**
   * Where the receiver logs (pino-compatible: any of `debug`, `info`, `warn`, `error`). It is never given
   * credentials or message bodies.
   * @defaultValue warnings and errors on the console
   * @example pino({ level: 'info' })
   */
  logger?: WebhookLogger;
  /**
   * The lowest level logged. `'debug'` logs each refused request and each repeat recognized as a duplicate;
   * setting the `DEBUG` environment variable to `chat-webhooks` does the same when this option is absent.
   * With your own `logger`, unset means your logger decides.
   * @defaultValue 'warn' for the console logger
   */
  logLevel?: LogLevel;
  /**
   * Traces and metrics of every delivery, commit and handler run: `openTelemetry()` from
   * `chat-webhooks/otel`, or your own implementation of its hooks. Unset: nothing is measured and the
   * receive path does no extra work. See the [observability guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/observability.md).
   * @example openTelemetry({ tracerProvider, meterProvider })
   */
  telemetry?: Telemetry;
  /**
   * With a durable inbox: on start, and when deliveries resume after a silence longer than the platform's
   * retries cover, recover what never arrived from the platform's list of messages, once across every
   * receiver sharing the inbox. `catchUp({ chat, webhook })` from `chat-webhooks/reconcile`. Unset: off.
   * See the [reconcile guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/reconcile.md#catching-up-by-itself).
   * @example catchUp({ chat: createChatClient({ appId, region: 'eu', apiKey }), webhook: 'wh_chat_events' })
   */
  catchUp?: CatchUp;
}

/**
 * Every option of `createWebhooks`, for the check that refuses a misspelled one. A record over the keys of
 * `WebhooksOptions`, so that tsc refuses to build while a new option is missing here.
 */
const KNOWN_OPTIONS = Object.keys({
  auth: true,
  maxBodyBytes: true,
  bodyTimeoutMs: true,
  invalidPayload: true,
  dedupe: true,
  handlerTimeoutMs: true,
  inbox: true,
  consume: true,
  worker: true,
  closeInbox: true,
  commitTimeoutMs: true,
  idempotencyKeys: true,
  logger: true,
  logLevel: true,
  telemetry: true,
  catchUp: true,
} satisfies Record<keyof WebhooksOptions, true>);
/** The worker options the receiver sets itself, from its own: the rest of `WORKER_OPTIONS` is `worker`'s. */
const SET_BY_RECEIVER = {
  inbox: true,
  logger: true,
  handlerTimeoutMs: true,
  closeInbox: true,
  telemetry: true,
} satisfies Record<Exclude<keyof WorkerOptions, keyof NonNullable<WebhooksOptions['worker']>>, true>;
const KNOWN_WORKER_OPTIONS = WORKER_OPTIONS.filter((key) => !Object.hasOwn(SET_BY_RECEIVER, key));
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The options checked and completed with their defaults. */
export interface Settings {
  readonly maxBodyBytes: number;
  readonly rejectInvalid: boolean;
  readonly handlerTimeoutMs: number;
  /** 0 when there is no limit. */
  readonly bodyTimeoutMs: number;
  readonly logger: WebhookLogger;
  /** Absent when authentication is off. */
  readonly verify: ((header: string | null | undefined) => Admitted) | undefined;
  /** Absent when duplicates are not looked for here (turned off, or an inbox decides). */
  readonly dedupe: DedupeWindow | undefined;
  readonly inbox: Inbox | undefined;
  /** Whether close() closes the inbox once nobody else here uses it. */
  readonly closeInbox: boolean;
  /** The in-process worker's options; absent without an inbox or with `consume: false`. */
  readonly worker: WorkerOptions | undefined;
  readonly commitTimeoutMs: number;
  readonly keyOf: KeyFunctions['keyOf'];
  /** The key from fields, where the event has one: what the in-memory window recognises repeats by. */
  readonly fieldKeyOf: KeyFunctions['fieldKeyOf'];
  readonly telemetry: Telemetry | undefined;
  /** Absent unless asked for (it needs a durable inbox). */
  readonly catchUp: CatchUp | undefined;
}

/** Checks the options and resolves their defaults; throws a `ConfigurationError` naming the option at fault. */
export function settingsOf(options: WebhooksOptions): Settings {
  checkPresence(options);
  rejectUnknownOptions('createWebhooks', options, KNOWN_OPTIONS);
  checkLimits(options);
  if (options.dedupe) checkDedupe(options.dedupe);
  checkInbox(options);
  rejectUnknownOptions('the `worker` of createWebhooks', options.worker, KNOWN_WORKER_OPTIONS);
  checkCatchUp(options);
  const { inbox } = options;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  const logger = leveled(options.logger, options.logLevel);
  return {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    rejectInvalid: options.invalidPayload === 'reject',
    handlerTimeoutMs,
    bodyTimeoutMs: finiteOrNone(options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS),
    logger,
    verify: options.auth === false ? undefined : createCredentialCheck(options.auth),
    dedupe: options.dedupe === false || inbox ? undefined : new DedupeWindow(options.dedupe),
    inbox,
    closeInbox: options.closeInbox !== false,
    worker: inbox && options.consume !== false ? { ...options.worker, inbox, handlerTimeoutMs, logger, telemetry: options.telemetry } : undefined,
    commitTimeoutMs: options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS,
    ...keyFunctions(options.idempotencyKeys),
    telemetry: checkTelemetry(options.telemetry),
    catchUp: options.catchUp,
  };
}

function checkCatchUp({ catchUp, inbox }: WebhooksOptions): void {
  if (catchUp === undefined) return;
  if (!isCatchUp(catchUp)) {
    // The plain options ({ chat, webhook }) would need reconcile and the REST client loaded here: the factory brings them.
    throw new ConfigurationError(
      'catchUp',
      "`catchUp` takes what catchUp() from 'chat-webhooks/reconcile' makes: import { catchUp } from 'chat-webhooks/reconcile', " +
        "then createWebhooks({ …, catchUp: catchUp({ chat, webhook: 'wh_…' }) }).",
    );
  }
  if (inbox === undefined || !inbox.durable) {
    throw new ConfigurationError('catchUp', '`catchUp` needs a durable `inbox` (sqliteInbox, redisInbox or postgresInbox): it records where it got to, and takes its lock, there.');
  }
  if (!canCoordinate(inbox)) {
    throw new ConfigurationError('catchUp', `\`catchUp\` needs an inbox with a lock and marks (tryLock, unlock, mark, setMark); the ${inbox.kind} inbox has none.`);
  }
}

function checkInbox({ inbox, consume, commitTimeoutMs, idempotencyKeys, closeInbox }: WebhooksOptions): void {
  if (closeInbox !== undefined && typeof closeInbox !== 'boolean') {
    throw new ConfigurationError('closeInbox', '`closeInbox` must be true or false.');
  }
  if (inbox !== undefined && (inbox === null || typeof inbox.put !== 'function' || typeof inbox.claim !== 'function')) {
    throw new ConfigurationError('inbox', `\`inbox\` must be an Inbox: ${INBOX_CHOICES}.`);
  }
  // Without an inbox there is nothing for workers elsewhere to read: the handlers would run here all the same.
  if (consume === false && inbox === undefined) {
    throw new ConfigurationError(
      'consume',
      `\`consume: false\` leaves the handlers to workers (createWorker) reading the same inbox: give \`inbox\` too (${INBOX_CHOICES}), or leave \`consume\` out to run them here.`,
    );
  }
  if (commitTimeoutMs !== undefined && !(commitTimeoutMs > 0)) {
    throw new ConfigurationError('commitTimeoutMs', '`commitTimeoutMs` must be a positive number of milliseconds.');
  }
  for (const [trigger, keyOf] of Object.entries(idempotencyKeys ?? {})) {
    if (typeof keyOf !== 'function') {
      throw new ConfigurationError(`idempotencyKeys.${trigger}`, 'Each `idempotencyKeys` entry must be a function (event) => string.');
    }
  }
}

function checkPresence(options: WebhooksOptions): void {
  if (options === null || typeof options !== 'object') {
    throw new ConfigurationError('options', 'createWebhooks needs an options object: { auth: { username, password } }.');
  }
  if (options.auth === undefined) {
    throw new ConfigurationError(
      'auth',
      'createWebhooks needs `auth`: the Basic credentials configured on the webhook ({ username, password }), ' +
        'or `auth: false` to accept unauthenticated requests.',
    );
  }
}

function checkLimits({ maxBodyBytes, handlerTimeoutMs, bodyTimeoutMs, invalidPayload, logLevel }: WebhooksOptions): void {
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) {
    throw new ConfigurationError('logLevel', `\`logLevel\` must be one of ${LOG_LEVELS.map((level) => `'${level}'`).join(', ')}.`);
  }
  if (bodyTimeoutMs !== undefined && !(bodyTimeoutMs >= 0)) {
    throw new ConfigurationError('bodyTimeoutMs', '`bodyTimeoutMs` must be 0 (no limit) or a positive number of milliseconds.');
  }
  if (maxBodyBytes !== undefined && !(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new ConfigurationError('maxBodyBytes', '`maxBodyBytes` must be a positive whole number of bytes.');
  }
  if (handlerTimeoutMs !== undefined && !(handlerTimeoutMs >= 0)) {
    throw new ConfigurationError('handlerTimeoutMs', '`handlerTimeoutMs` must be 0 (no limit) or a positive number.');
  }
  if (invalidPayload !== undefined && invalidPayload !== 'accept' && invalidPayload !== 'reject') {
    throw new ConfigurationError('invalidPayload', "`invalidPayload` must be 'accept' or 'reject'.");
  }
}

function checkDedupe({ maxKeys, windowMs }: DedupeOptions): void {
  if (maxKeys !== undefined && !(Number.isSafeInteger(maxKeys) && maxKeys > 0 && maxKeys <= MAX_DEDUPE_KEYS)) {
    throw new ConfigurationError('dedupe.maxKeys', `\`dedupe.maxKeys\` must be a whole number from 1 to ${MAX_DEDUPE_KEYS}.`);
  }
  if (windowMs !== undefined && !(windowMs > 0)) {
    throw new ConfigurationError('dedupe.windowMs', '`dedupe.windowMs` must be a positive number of milliseconds.');
  }
}

/** A time limit in milliseconds, 0 meaning none (`Infinity` is none too: no timer can wait that long). */
function finiteOrNone(ms: number): number {
  return ms === Infinity ? 0 : ms;
}
