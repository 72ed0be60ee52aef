/**
 * Body deadlines: a body not complete `timeoutMs` after its headers passed is given up on. One coarse timer
 * serves every request still reading, instead of a timer per request (which cost a few µs of CPU each, on
 * the hot path): requests are linked in arrival order, which is also deadline order as they share one limit,
 * and each tick expires them from the front. A deadline is kept to within a tenth of the limit. Deadlines
 * are counted in the timer's ticks rather than read from the clock, which spares every request a clock read
 * (about 70 ns; intake's one read serves the duplicate window and the handlers).
 */
import { BodyArrival, type ArrivalListener } from '../http.js';
import type { WebhookBody } from '../parse/parse.js';

/** A body still being read. */
export type Reading = Promise<WebhookBody> | BodyArrival;

/** Calls back once the body is read, whichever way the adapter tells it. */
export function whenRead(reading: Reading, listener: ArrivalListener): void {
  if (reading instanceof BodyArrival) reading.listen(listener);
  else reading.then((body) => listener.arrived(body), (cause: unknown) => listener.failed(cause));
}

export const TIMED_OUT = Symbol('timed out');
export type Arrival = WebhookBody | typeof TIMED_OUT;

/**
 * A body being read, and who hears how that ends: the body, TIMED_OUT, or the failure (`answer`,
 * `unreadable`). It is its own place in the deadline order, so watching a body makes no object besides it.
 */
export abstract class Watched implements ArrivalListener {
  previous: Watched | undefined;
  next: Watched | undefined;
  deadline = 0;
  /** The deadlines watching it; none when bodies have no time limit. */
  deadlines: BodyDeadlines | undefined;

  abstract answer(arrival: Arrival): void;
  abstract unreadable(cause: unknown): void;

  arrived(body: WebhookBody): void {
    if (this.deadlines === undefined || this.deadlines.release(this)) this.answer(body);
  }

  failed(cause: unknown): void {
    if (this.deadlines === undefined || this.deadlines.release(this)) this.unreadable(cause);
  }
}

/** A watched body told to two callbacks (`watch`). */
class Callbacks extends Watched {
  constructor(
    readonly answer: (arrival: Arrival) => void,
    readonly unreadable: (cause: unknown) => void,
  ) {
    super();
  }
}

export class BodyDeadlines {
  #first: Watched | undefined;
  #last: Watched | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #tickMs: number;
  /** Ticks so far; they advance only while a body is awaited, and deadlines are reckoned in them. */
  #ticks = 0;
  /** The ticks that make up the limit. */
  readonly #ticksAllowed: number;

  constructor(timeoutMs: number) {
    this.#tickMs = Math.min(1000, Math.max(5, timeoutMs / 10));
    this.#ticksAllowed = Math.ceil(timeoutMs / this.#tickMs);
  }

  /**
   * Hands `arrived` the body, or TIMED_OUT once the deadline passed without it (a body arriving after that is
   * dropped unread); a failed read goes to `failed` unless the deadline passed first. Callbacks rather than
   * a promise: this is on every request's path, and each promise in it costs.
   */
  watch(reading: Reading, arrived: (arrival: Arrival) => void, failed: (cause: unknown) => void): void {
    this.listen(reading, new Callbacks(arrived, failed));
  }

  /** `watch` for a listener object: the receiver's, which spares a request its closures. */
  listen(reading: Reading, watched: Watched): void {
    // A body that starts the timer is in step with its ticks. Any other may come just before a tick, which
    // must not count as a whole one: it gets one tick more.
    watched.deadline = this.#ticks + this.#ticksAllowed + (this.#timer ? 1 : 0);
    watched.deadlines = this;
    watched.previous = this.#last;
    this.#add(watched);
    whenRead(reading, watched);
  }

  #add(waiting: Watched): void {
    if (this.#last) this.#last.next = waiting;
    else this.#first = waiting;
    this.#last = waiting;
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#expire(), this.#tickMs);
      // Waiting for a body must not keep an otherwise finished process alive.
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** Unlinks a waiting request (its body arrived, failed or expired); false when it was already gone. */
  release(waiting: Watched): boolean {
    const { previous, next } = waiting;
    if (previous === undefined && this.#first !== waiting) return false;
    if (previous) previous.next = next;
    else this.#first = next;
    if (next) next.previous = previous;
    else this.#last = previous;
    waiting.previous = waiting.next = undefined;
    return true;
  }

  #expire(): void {
    const now = ++this.#ticks;
    while (this.#first && this.#first.deadline <= now) {
      const expired = this.#first;
      this.release(expired);
      expired.answer(TIMED_OUT);
    }
    if (!this.#first) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
