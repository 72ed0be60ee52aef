/**
 * `catchUp({ chat, webhook })`: the receiver's catch-up (`createWebhooks({ inbox, catchUp })`), built on
 * reconcile. On start it reconciles from the inbox's mark (where the last run, or the last steady stream of
 * deliveries, got to) minus a margin; when deliveries resume after a silence longer than the platform's retries
 * cover, from the last delivery before it. One receiver at a time runs (a leased lock in the inbox, renewed
 * while it runs); the others skip, since that run covers them. A run that fails is tried again, from the
 * same point, at the next sign of life; only a run that ended raises the mark (a first run that failed sets it
 * where its window starts). A run records in the inbox that it began, so that when it never ends (it failed,
 * and its receiver stopped or hears nothing more), the next receiver whose deliveries flow takes its window
 * up instead of raising the mark past it.
 */
import type { ChatClient } from '../api/index.js';
import type { CatchUp, CatchUpContext } from '../receive/index.js';
import { sleep } from '../platform/sleep.js';
import { reconcile, type ReconcileReport } from './reconcile.js';
import type { EnvelopeParts } from './rebuild.js';

export interface CatchUpOptions {
  /** A client from `createChatClient(...)` (chat-webhooks/api): its key reads the list of messages. */
  chat: Pick<ChatClient, 'messages' | 'baseUrl'>;
  /** The webhook's id, as its deliveries' envelopes carry it: part of every key. */
  webhook: string;
  /** The envelope's `appId`. @defaultValue the app of `chat`'s host (`https://<appId>.api-<region>.…`) */
  appId?: string;
  /** The envelope's `region`. @defaultValue the region of `chat`'s host */
  region?: string;
  /**
   * A silence between deliveries longer than this is one the platform's retries (about +10 s and +30 s) did not
   * cover. It is also how far back a first start (no mark yet) looks. @defaultValue 60000
   */
  horizonMs?: number;
  /** How far before the mark (or the last delivery) a run starts, for deliveries still in their retries then. @defaultValue 60000 */
  marginMs?: number;
  /** The lock's lease: a receiver that died holding it blocks the others this long at most. @defaultValue 60000 */
  lockMs?: number;
}

export const DEFAULT_HORIZON_MS = 60_000;
/** A beat holds the lock for a few store calls: ten tries 100 ms apart outlast that on a slow network. */
const LOCK_TRIES = 10;
const LOCK_RETRY_MS = 100;

/**
 * @example
 * ```ts
 * import { catchUp } from 'chat-webhooks/reconcile';
 *
 * const webhooks = createWebhooks({ auth, inbox: sqliteInbox({ path: './inbox.db' }), catchUp: catchUp({ chat, webhook: 'wh_chat_events' }) });
 * ```
 */
export function catchUp(options: CatchUpOptions): CatchUp {
  return new ReconcileCatchUp(checked(options));
}

/** The inbox's two records of catch-up: where the runs and beats got to, and the latest run to begin. */
interface Marks {
  mark: number | undefined;
  began: number | undefined;
}

interface Checked extends EnvelopeParts {
  chat: CatchUpOptions['chat'];
  horizonMs: number;
  marginMs: number;
  lockMs: number;
}

class ReconcileCatchUp implements CatchUp {
  readonly horizonMs: number;
  readonly #options: Checked;
  /** The lock and the mark, per app and webhook: receivers of two apps may share one inbox. */
  readonly #name: string;
  /** The mark of the latest run to begin (its `until`): above the mark, a run began and has not ended. */
  readonly #began: string;
  readonly #holder = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
  /**
   * Where a run that failed started, or where the part of a run's window that another run did not cover
   * starts (it left that window to it): the next run starts there.
   */
  #failedSince: number | undefined;
  /** That point was the mark: tried again, it is read again under the lock, as a start's is. */
  #failedFromMark = false;

  constructor(options: Checked) {
    this.#options = options;
    this.horizonMs = options.horizonMs;
    // Escaped, so that app `x:y` with webhook `z` and app `x` with webhook `y:z` do not share a lock and marks.
    const scope = `${encodeURIComponent(options.appId)}:${encodeURIComponent(options.webhook)}`;
    this.#name = `catch-up:${scope}`;
    this.#began = `catch-up-began:${scope}`;
  }

  async start(context: CatchUpContext): Promise<void> {
    const mark = await context.inbox.mark(this.#name);
    // With no mark, `since` is no mark to read again under the lock: a mark found there (a later start's that
    // ended, or a failed first run's window start) does not reach down to the horizon before this start.
    await this.#run(context, mark ?? Date.now() - this.horizonMs, { fromMark: mark !== undefined });
  }

  async resumed(context: CatchUpContext, lastHeard: number): Promise<void> {
    await this.#run(context, Math.min(lastHeard, this.#failedSince ?? lastHeard));
  }

  async heard(context: CatchUpContext, at: number): Promise<void> {
    if (this.#failedSince !== undefined) return this.#run(context, this.#failedSince, { fromMark: this.#failedFromMark });
    const { inbox } = context;
    // Under the lock, as a run records its start: otherwise a run could take the lock and begin between this
    // beat's reading of the marks and its raising of the mark, which would then hide that run's window if it
    // failed. Held: a run is in progress, and the mark is its to raise.
    if (!(await this.#tryLock(inbox))) return;
    try {
      // A run (this receiver's or another's) began and never ended: raising the mark would hide its window.
      const owed = this.#owed(await this.#marks(inbox));
      if (owed !== undefined) return await this.#run(context, owed, { fromMark: true });
      // Deliveries flow: everything up to now arrived (or is in its retries, which the margin covers).
      await inbox.setMark(this.#name, at);
    } finally {
      await this.#release(inbox);
    }
  }

  #tryLock(inbox: CatchUpContext['inbox']): Promise<boolean> {
    return inbox.tryLock(this.#name, this.#holder, this.#options.lockMs);
  }

  /** A lock left held (the store unreachable) is another receiver's for at most its lease: nothing to report. */
  async #release(inbox: CatchUpContext['inbox']): Promise<void> {
    await inbox.unlock(this.#name, this.#holder).catch(() => undefined);
  }

  async #marks(inbox: CatchUpContext['inbox']): Promise<Marks> {
    const [mark, began] = await Promise.all([inbox.mark(this.#name), inbox.mark(this.#began)]);
    return { mark, began };
  }

  /** Where the window of a run that began and did not end starts (the mark; with none, a first start's), if one did. */
  #owed({ mark, began }: Marks): number | undefined {
    if (began === undefined || (mark !== undefined && began <= mark)) return undefined;
    return mark ?? began - this.horizonMs;
  }

  /** Also called under the lock (from `heard`): taking it again is a renewal. */
  async #run(context: CatchUpContext, since: number, { fromMark = false } = {}): Promise<void> {
    try {
      if (!(await this.#lock(context))) {
        // That run walks up to its start (`began`): events after it, sent longer ago than the margin (past
        // their retries), are not in its window. This run's then owes them, from there, at the next delivery.
        const began = await context.inbox.mark(this.#began);
        if (this.#failedSince === undefined && began !== undefined && Date.now() - began > this.#options.marginMs) {
          this.#failedSince = Math.max(since, began);
          this.#failedFromMark = fromMark;
        }
        context.logger.debug?.({ name: this.#name }, 'Another receiver sharing the inbox is catching up: this one leaves it to it.');
        return;
      }
      await this.#walkLocked(context, since, fromMark);
      this.#failedSince = undefined;
    } catch (error) {
      // A run from the mark tried again after another receiver's run ended would otherwise walk that run's
      // window a second time. Not a resumed one's point: the silence it walks is this receiver's own.
      this.#failedFromMark = fromMark && (this.#failedSince === undefined || this.#failedFromMark);
      this.#failedSince = Math.min(since, this.#failedSince ?? since);
      throw error;
    }
  }

  /**
   * A run's walk, the lock taken (renewed while it walks, freed after). `fromMark`: `since` is the mark as read
   * before the lock, read again here, since a run that ended meanwhile walked up to its new value. The walk also
   * takes up any window owed below `since`.
   */
  async #walkLocked(context: CatchUpContext, since: number, fromMark: boolean): Promise<void> {
    const { inbox, logger } = context;
    const { lockMs, marginMs } = this.#options;
    // One renewal at a time, awaited before the unlock: one still on its way to the store would take the lock
    // again after it, leaving it held for a whole lease by a receiver that runs nothing.
    let renewing: Promise<unknown> | undefined;
    const renew = setInterval(() => {
      renewing ??= this.#tryLock(inbox)
        .catch(() => undefined)
        .finally(() => (renewing = undefined));
    }, lockMs / 3);
    try {
      const marks = await this.#marks(inbox);
      if (fromMark) since = Math.max(since, marks.mark ?? since);
      // A window another run left owed, below this one's start (a resumed run's, when the margin is shorter
      // than the horizon): raising the mark past it would hide it from every later start.
      since = Math.min(since, this.#owed(marks) ?? since);
      const until = Date.now();
      await inbox.setMark(this.#began, until);
      const report = await this.#reconcile(context, Math.min(since - marginMs, until), until).catch(async (error: unknown) => {
        // No mark yet (no run ever ended): one where this window starts, so that the window owed starts
        // there, and not a horizon before the latest try's start, which moves on with every try that fails.
        if (marks.mark === undefined) await inbox.setMark(this.#name, since).catch(() => undefined);
        throw error;
      });
      await inbox.setMark(this.#name, until);
      logger.info?.(figures(report), `Caught up from ${new Date(since - marginMs).toISOString()}: ${report.recovered} recovered, ${report.duplicates} already had.`);
    } finally {
      clearInterval(renew);
      await renewing;
      await this.#release(inbox);
    }
  }

  /**
   * Takes the lock for a run (true), or leaves the window to another run that covers it (false). Held by
   * another receiver's run (it began and has not ended): that run covers this one's window up to
   * its start (the rest, when past the margin, this one walks at its next delivery: see `#run`). Held by a beat
   * (for a few store calls): a run leaving then would lose its window, which the beat does not walk, so try
   * again for a little while; a run that began meanwhile covers it. Held past that with no run begun (a slow
   * store, or a receiver that died holding it): the run fails, to be tried again at the next delivery.
   */
  async #lock({ inbox, signal }: CatchUpContext): Promise<boolean> {
    if (await this.#tryLock(inbox)) return true;
    const seen = await this.#marks(inbox);
    if (this.#owed(seen) !== undefined) return false;
    for (let tries = 1; tries < LOCK_TRIES; tries++) {
      await sleep(LOCK_RETRY_MS, signal);
      if (!(await this.#tryLock(inbox))) continue;
      if ((await inbox.mark(this.#began)) === seen.began) return true;
      await this.#release(inbox);
      return false;
    }
    const now = await this.#marks(inbox);
    if (now.began !== seen.began || this.#owed(now) !== undefined) return false;
    throw new Error(`The catch-up lock (${this.#name}) stayed held for ${(LOCK_TRIES * LOCK_RETRY_MS) / 1000} s with no run begun: tried again at the next delivery.`);
  }

  #reconcile(context: CatchUpContext, since: number, until: number): Promise<ReconcileReport> {
    const { chat, appId, region, webhook } = this.#options;
    const { redeliver, signal, telemetry } = context;
    return reconcile({ webhooks: { redeliver }, chat, appId, region, webhook, since, until, signal, telemetry });
  }
}

function figures({ skippedByKind: _, ...rest }: ReconcileReport): Record<string, number> {
  return rest;
}

function checked(options: CatchUpOptions): Checked {
  if (options === null || typeof options !== 'object' || typeof options.chat?.messages?.list !== 'function') {
    throw new TypeError("catchUp needs { chat, webhook }: chat a client from createChatClient(...) (chat-webhooks/api).");
  }
  const host = /^([^.]+)\.api-([^.]+)\./.exec(safeHost(options.chat.baseUrl));
  const parts = { appId: options.appId ?? host?.[1], region: options.region ?? host?.[2], webhook: options.webhook };
  for (const part of ['appId', 'region', 'webhook'] as const) {
    if (typeof parts[part] !== 'string' || parts[part] === '') throw new TypeError(`catchUp: ${part} is the envelope's ${part}, a non-empty string (part of every key); give it.`);
    // The lock's and marks' names escape it (encodeURIComponent), which throws on half a surrogate pair.
    if (/\p{Cs}/u.test(parts[part])) throw new TypeError(`catchUp: ${part} holds half of a UTF-16 surrogate pair; no envelope's ${part} does.`);
  }
  const ms = (name: 'horizonMs' | 'marginMs' | 'lockMs', fallback: number): number => {
    const value = options[name] ?? fallback;
    if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) throw new TypeError(`catchUp: ${name} is a positive number of milliseconds.`);
    return value;
  };
  return { ...(parts as EnvelopeParts), chat: options.chat, horizonMs: ms('horizonMs', DEFAULT_HORIZON_MS), marginMs: ms('marginMs', 60_000), lockMs: ms('lockMs', 60_000) };
}

function safeHost(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname;
  } catch {
    return '';
  }
}
