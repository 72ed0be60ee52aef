/**
 * The receiver's acknowledged work (an event's handlers, onError's report of a refusal) and its in-flight
 * list for close(); work starts right after the response was sent.
 */
import type { ParsedWebhook } from '../events/index.js';
import type { WebhookResponse } from './http.js';

const RESOLVED = Promise.resolve();

/**
 * Work acknowledged and not yet finished: an event's handlers, or onError's report of a refusal. Jobs are
 * linked into their receiver's in-flight list from creation to end, for close(): a list rather than a Set,
 * whose add-then-delete on every request keeps rehashing it. A job's `done` promise is made only when
 * someone asks (Lambda and fetch adapters do, node:http never does), which spares one per request.
 */
export class Job {
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
export class InFlight {
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
export class JobResponse implements WebhookResponse {
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
export function defer(job: Job): void {
  if (deferred.push(job) === 1) nextTurn(runDeferred);
}
