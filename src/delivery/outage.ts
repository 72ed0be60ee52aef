/**
 * What a worker says of an inbox that stopped answering its claims: one warning when the first claim fails,
 * then nothing while it stays away, and one line when a claim is answered again. Between, each claim loop
 * waits longer and longer before it asks again (1 s doubling up to 5 s, half of it random, so that many
 * workers do not come back at once). Each of its loops used to log every failed claim: with PostgreSQL down,
 * several lines a second for the outage's length. The same for every store: every claim goes through here.
 *
 * A flapping store (down a second, back a second, for hours) would still make two lines a flap. So an outage
 * that starts within QUIET_MS of the last line is announced only once it lasts SETTLE_MS (or QUIET_MS has
 * passed since that line); one that ends before is counted, and the next line says how many there were. A
 * store that stays down is therefore always announced, and every announced outage's end too.
 */
import { describeCause } from '../dispatch/errors.js';
import type { WebhookLogger } from '../dispatch/logger.js';

const FIRST_PAUSE_MS = 1000;
/** The longest pause: a store that is back is noticed within this long. */
const MAX_PAUSE_MS = 5000;
/** After a line, how long a new outage waits to be announced (unless it lasts SETTLE_MS). */
const QUIET_MS = 60_000;
/** An outage this long is announced whatever came before. */
const SETTLE_MS = 10_000;

export class Outage {
  /** When the first failed claim of this outage was; undefined while the inbox answers. */
  #since: number | undefined;
  #failedClaims = 0;
  /** Whether this outage's warning was logged (so its end is too). */
  #announced = false;
  #lastLineAt = Number.NEGATIVE_INFINITY;
  /** Outages that came and went unannounced since the last line. */
  #brief = 0;

  constructor(
    private readonly kind: string,
    private readonly logger: WebhookLogger,
  ) {}

  /** A claim failed, the `streak`-th in a row of its loop: warns if it is the first; returns the pause before the next. */
  failed(cause: unknown, streak: number, random: () => number = Math.random): number {
    this.#failedClaims++;
    const now = Date.now();
    this.#since ??= now;
    if (!this.#announced && (now - this.#lastLineAt >= QUIET_MS || now - this.#since >= SETTLE_MS)) this.#announce(cause, now);
    const ceiling = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(streak - 1, 10));
    return Math.round(ceiling / 2 + (random() * ceiling) / 2);
  }

  /** A claim was answered (an event or none): if the inbox was away, says once that it is back. */
  answered(): void {
    if (this.#since === undefined) return;
    const now = Date.now();
    if (this.#announced) {
      const seconds = (now - this.#since) / 1000;
      // A warning like the one that announced the outage: a logger that shows one shows the other.
      this.logger.warn?.(
        { inbox: this.kind, downMs: now - this.#since, failedClaims: this.#failedClaims },
        `The ${this.kind} inbox answers again after ${seconds.toFixed(1)} s (${this.#failedClaims} failed claims); the worker claims events again.`,
      );
      this.#lastLineAt = now;
    } else {
      this.#brief++;
    }
    this.#since = undefined;
    this.#failedClaims = 0;
    this.#announced = false;
  }

  #announce(cause: unknown, now: number): void {
    const reason = describeCause(cause);
    const brief = this.#brief === 0 ? '' : ` (after ${this.#brief} brief outages not logged one by one: it comes and goes)`;
    this.logger.warn?.(
      { inbox: this.kind, reason, ...(this.#brief === 0 ? {} : { briefOutages: this.#brief }) },
      `The ${this.kind} inbox is not answering (${reason})${brief}: no event is claimed until it does. ` +
        'Claims are tried again with a growing pause; one line will say when it is back.',
    );
    this.#announced = true;
    this.#lastLineAt = now;
    this.#brief = 0;
  }
}
