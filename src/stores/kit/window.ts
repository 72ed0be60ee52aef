/**
 * How long a store remembers a key, and the background work that forgets it: the defaults and the checks
 * of the `windowMs` option, and the sweep every durable store runs (done rows past their window deleted a
 * small batch at a time, so that no delete holds the store for long).
 */
import { DEFAULT_DURABLE_WINDOW_MS } from '../../delivery/port.js';

export { DEFAULT_DURABLE_WINDOW_MS };
/** The memory inbox forgets sooner: what it remembers is held in the process's heap. */
export const DEFAULT_MEMORY_WINDOW_MS = 10 * 60 * 1000;
/** Rows one sweep deletes at most, and how often a sweep runs. */
export const EXPIRY_BATCH = 500;
export const EXPIRY_EVERY_MS = 1000;

/** The window a store was given, or its default; anything but a positive number fails, naming the store. */
export function windowOption(store: string, windowMs: number | undefined, fallback = DEFAULT_DURABLE_WINDOW_MS): number {
  if (windowMs === undefined) return fallback;
  if (!(windowMs > 0)) throw new TypeError(`${store}: \`windowMs\` must be a positive number of milliseconds.`);
  return windowMs;
}

/**
 * Runs `sweep` every `everyMs` on a timer that does not keep the process alive; a sweep still running when
 * the next is due is not doubled, and a sweep that fails is simply run again next time (a lost connection is
 * every other call's to report). `stop()` ends it.
 */
export function startSweeps(sweep: () => unknown, everyMs = EXPIRY_EVERY_MS): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    Promise.resolve()
      .then(sweep)
      .catch(() => undefined)
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Repeats an admin statement that handles up to `batch` rows until one handles fewer; resolves the total. */
export async function inBatches(run: () => Promise<number>, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await run();
    total += count;
    if (count < batch) return total;
  }
}
