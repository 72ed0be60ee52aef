/**
 * In-flight tracking: work acknowledged and not yet finished (an event's handlers, or onError's report of a
 * refusal), started right after the response went out, and drained by close().
 */
import type { ParsedWebhook } from '../../events/index.js';
import type { WebhookResponse } from '../http.js';

const RESOLVED = Promise.resolve();

/**
 * One piece of acknowledged work. Errands are linked into their receiver's in-flight list from creation to
 * end, for close(): a list rather than a Set, whose add-then-delete on every request keeps rehashing it. An
 * errand's `done` promise is made only when someone asks (the fetch adapter does, node:http never does),
 * which spares one per request. The work is a function, or a subclass's `run` (sparing a closure).
 */
export class Errand {
  #finished = false;
  #done?: Promise<void>;
  #resolve?: () => void;
  previous: Errand | undefined;
  next: Errand | undefined;

  constructor(
    readonly event: ParsedWebhook | undefined,
    private readonly work: (() => Promise<void> | undefined) | undefined,
    private readonly list: InFlight,
  ) {
    list.add(this);
  }

  /** The work itself. Returns a promise only when it is still running. */
  protected run(): Promise<void> | undefined {
    return this.work?.();
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
      running = this.run();
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

/** A receiver's unfinished errands, newest last; `closing` once close() was called. */
export class InFlight {
  #first: Errand | undefined;
  #last: Errand | undefined;
  closing = false;

  add(errand: Errand): void {
    errand.previous = this.#last;
    if (this.#last) this.#last.next = errand;
    else this.#first = errand;
    this.#last = errand;
  }

  remove(errand: Errand): void {
    if (errand.previous) errand.previous.next = errand.next;
    else this.#first = errand.next;
    if (errand.next) errand.next.previous = errand.previous;
    else this.#last = errand.previous;
    errand.previous = errand.next = undefined;
  }

  toArray(): Errand[] {
    const errands: Errand[] = [];
    for (let errand = this.#first; errand; errand = errand.next) errands.push(errand);
    return errands;
  }
}

/**
 * A response with work after it: the errand itself, so that acknowledging a request makes one object, not
 * an errand and a response. Its `done` is the errand's.
 */
export class ErrandResponse extends Errand implements WebhookResponse {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string,
    event: ParsedWebhook | undefined,
    work: (() => Promise<void> | undefined) | undefined,
    list: InFlight,
  ) {
    super(event, work, list);
  }
}

/** How a response's work starts once the response was handed over: at once, or deferred (`defer`). */
export type StartWork = (errand: Errand) => void;

/**
 * For `respond`, whose adapters have written the response by the time `send` returns: the work starts right
 * then, in the same turn, without a tick of its own.
 */
export const startNow: StartWork = (errand) => errand.start();

/** Whether a response's work (handlers, onError reports) has finished: then `done` has nothing to wait for. */
export function workFinished(response: WebhookResponse): boolean {
  return response instanceof Errand ? response.finished : true;
}

/**
 * Starts errands after a response handed over as a promise (`handle`) has been sent: the caller takes it in
 * promise jobs, and node's next tick comes once those have drained, so handlers start right after, in the
 * same turn of the event loop. Elsewhere a zero timer does the same. Errands queued in one tick share one
 * callback.
 */
let deferred: Errand[] = [];
const nodeProcess = (globalThis as { process?: { nextTick?: (run: () => void) => void } }).process;
const nextTurn: (run: () => void) => void =
  typeof nodeProcess?.nextTick === 'function' ? (run) => nodeProcess.nextTick?.(run) : (run) => setTimeout(run, 0);
function runDeferred(): void {
  const errands = deferred;
  deferred = [];
  // Each errand guards itself, so one cannot stop the others.
  for (const errand of errands) errand.start();
}

/** Starts the errand once the response in hand has been sent. */
export function defer(errand: Errand): void {
  if (deferred.push(errand) === 1) nextTurn(runDeferred);
}

/**
 * Waits up to `timeoutMs` for the errands in flight now; hands each one still running to `abandon`.
 * Returns how many finished and how many were abandoned.
 */
export async function drain(
  inFlight: InFlight,
  timeoutMs: number,
  abandon: (event: ParsedWebhook | undefined) => Promise<void> | undefined,
): Promise<{ drained: number; abandoned: number }> {
  const pending = inFlight.toArray();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([Promise.all(pending.map((errand) => errand.done)), deadline]);
  clearTimeout(timer);
  const abandoned = pending.filter((errand) => !errand.finished);
  await Promise.all(abandoned.map(({ event }) => abandon(event)));
  return { drained: pending.length - abandoned.length, abandoned: abandoned.length };
}
