/**
 * The simulator's time. `advance` moves it on, so a test passes a visibility timeout (30 s) or FIFO's
 * deduplication window (5 minutes) at once. The default follows the real clock, moved on by what was
 * advanced: other parts of a test (a DynamoDB lease, the handler's deadline) keep their real time.
 */
export interface Clock {
  now(): number;
  advance(ms: number): void;
}

/** Real time plus what was advanced. */
export function realClock(): Clock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => void (offset += ms),
  };
}

/** Time that moves only when told: the simulator's own tests use it, so nothing depends on how fast they run. */
export function manualClock(start = 1_767_225_600_000): Clock {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => void (now += ms),
  };
}
