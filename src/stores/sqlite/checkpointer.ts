/**
 * Checkpoints a SQLite WAL from a worker thread, so that the receiver's event loop never does.
 *
 * SQLite checkpoints inside a commit once the WAL passes 1 000 pages: it copies them into the database file and
 * fsyncs both, on the thread that committed. With better-sqlite3 that is the event loop, and it took half of
 * a put's cost (22 µs per put against 11 with checkpoints off, bench/inbox-putcost.mjs). Here the inbox's own
 * connection never checkpoints; a worker thread with its own connection runs PASSIVE checkpoints, which never
 * hold up a writer. Under steady writes the WAL still grows: SQLite starts it over only when a write finds it
 * fully copied, and a checkpoint rarely ends before the next commit adds frames. Past RESTART_FRAMES the worker
 * catches up: PASSIVE checkpoints every CATCH_UP_MS, each copying only what the commits since the last added,
 * until one ends between two commits and the next commit starts the WAL over. Only a WAL that keeps ahead of
 * MAX_CATCH_UPS of them gets a RESTART checkpoint, which holds writers until the WAL is copied and synced: on the
 * event loop that was a stall of 56–86 ms every few seconds at 10 000 puts/s, against 8–14 ms at most with the
 * catch-up (`node bench/sqlite-stalls.mjs`: the event loop's longest delay over 20 s of puts).
 *
 * If the worker cannot run (its thread fails, the driver does not load there), `onFailure` runs and the
 * connection should checkpoint as SQLite does by default; nothing is lost either way, checkpoints only move
 * what the WAL already holds durably.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * How often the worker checkpoints while the WAL is idle, and while writes arrive. Rarely is cheaper: a page
 * rewritten by many commits is copied once per checkpoint, and each checkpoint fsyncs twice. The receiver's
 * CPU per put (same process, so same core in the benchmark) was 22 µs above the memory inbox's at 10 ms,
 * 17 µs at 100 ms, 9–15 µs at 300 ms to 1 s (`BENCH_SETUPS=memory/receive,sqlite/receive npm run bench:inboxes`).
 */
const IDLE_MS = 1000;
const BUSY_MS = 500;
/** 8 192 pages: 32 MB with 4 KiB pages. */
const RESTART_FRAMES = 8192;
const CATCH_UP_MS = 2;
/** Catch-ups took 3–13 PASSIVE checkpoints at 10 000 and 20 000 puts/s; writes with no gap at all never let one end. */
const MAX_CATCH_UPS = 25;

/** CommonJS, run with `eval`: no file of its own to find beside the ES module or CommonJS build. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
let lastLog = -1;
let catchUps = 0;
let timer;
parentPort.on('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
function round() {
  let log = lastLog;
  try {
    [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log < workerData.restartFrames) {
      if (catchUps > 0) parentPort.postMessage('caught up');
      catchUps = 0;
    } else if (++catchUps > workerData.maxCatchUps) {
      [{ log }] = db.pragma('wal_checkpoint(RESTART)');
      parentPort.postMessage('restarted');
      catchUps = 0;
    }
  } catch {
    // A busy or failed round is tried again at the next; the WAL keeps everything meanwhile.
  }
  const idle = log === lastLog;
  lastLog = log;
  timer = setTimeout(round, catchUps > 0 ? workerData.catchUpMs : idle ? workerData.idleMs : workerData.busyMs);
}
round();
`;

export interface Checkpointer {
  /** How a grown WAL was started over so far: by catching up (writers never waited), or by RESTART. */
  readonly resets: { caughtUp: number; restarted: number };
  /** Stops the worker once its current checkpoint is over; resolves once its connection is closed. */
  close(): Promise<void>;
}

/** The thresholds above; tests lower them. */
export interface CheckpointerLimits {
  restartFrames?: number;
  maxCatchUps?: number;
}

/** Starts checkpointing the database at `path`; `onFailure` runs if the worker stops on its own. */
export function startCheckpointer(
  path: string,
  busyTimeoutMs: number,
  onFailure: (error: unknown) => void,
  { restartFrames = RESTART_FRAMES, maxCatchUps = MAX_CATCH_UPS }: CheckpointerLimits = {},
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, busyTimeoutMs, restartFrames, idleMs: IDLE_MS, busyMs: BUSY_MS, catchUpMs: CATCH_UP_MS, maxCatchUps },
  });
  const resets = { caughtUp: 0, restarted: 0 };
  worker.on('message', (reset: 'caught up' | 'restarted') => {
    if (reset === 'caught up') resets.caughtUp += 1;
    else resets.restarted += 1;
  });
  // An application's exit should not wait for a checkpoint: whatever the WAL holds is already durable.
  worker.unref();
  let closing = false;
  let failure: unknown;
  worker.on('error', (error) => (failure = error));
  const exited = new Promise<void>((resolve) => {
    worker.on('exit', (code) => {
      // Its source reports every way it can stop (an uncaught error, the driver or file failing) as 'error' first.
      if (!closing) onFailure(failure ?? new Error(`The SQLite checkpointer stopped (exit code ${code}).`));
      resolve();
    });
  });
  return {
    resets,
    close() {
      closing = true;
      worker.ref(); // until it has closed its connection
      worker.postMessage('close');
      return exited;
    },
  };
}
