/**
 * Machine CPU accounting from /proc (Linux), to tell whether something outside the benchmark competed for the
 * cores during a run: "foreign" CPU = user+system time of all processes on the machine minus that of the
 * benchmark's own processes. Kernel softirq time (loopback networking) is left out of both. Elsewhere the
 * figures are null and nothing waits.
 */
import { readFileSync } from 'node:fs';

function machineTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const [user, nice, system] = line.trim().split(/\s+/).slice(1, 4).map(Number);
    return user + nice + system;
  } catch {
    return null;
  }
}

function processTicks(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  } catch {
    return 0;
  }
}

const HZ = 100; // USER_HZ, 100 on Linux

/** A snapshot; `foreignCores(a, b)` gives the average number of cores others used between two snapshots. */
export function snapshot(pids) {
  const machine = machineTicks();
  if (machine === null) return null;
  let own = 0;
  for (const pid of pids) own += processTicks(pid);
  return { machine, own, time: performance.now(), pids: [...pids] };
}

export function foreignCores(a, b) {
  if (!a || !b) return null;
  // Processes that exited in between make `own` fall: never report negative foreign time.
  const foreign = Math.max(0, b.machine - a.machine - Math.max(0, b.own - a.own));
  const seconds = (b.time - a.time) / 1000;
  return seconds > 0 ? foreign / HZ / seconds : null;
}

/**
 * Waits until others use less than `threshold` cores over `sampleMs`, for at most `maxWaitMs`. Returns the
 * last measured foreign load and how long it waited.
 */
export async function waitForQuiet(pids, { threshold = 0.15, sampleMs = 300, maxWaitMs = 15_000 } = {}) {
  const start = performance.now();
  for (;;) {
    const a = snapshot(pids);
    if (!a) return { foreign: null, waitedMs: 0 };
    await new Promise((resolve) => setTimeout(resolve, sampleMs));
    const foreign = foreignCores(a, snapshot(pids));
    const waitedMs = performance.now() - start;
    if (foreign < threshold || waitedMs >= maxWaitMs) return { foreign, waitedMs: Math.round(waitedMs) };
  }
}
