/**
 * A full garbage collection after every so many bytes of request bodies. `listen` is left running and takes
 * bodies up to 1 MiB; each passes through several copies (the chunks, the text, two parses, the feed's
 * message) that are garbage a moment later, and V8 lets its heap grow well past what is live before it
 * collects, by how much depending on timing: with ten paused pages and sixty 900 KB deliveries the peak
 * varied from 131 to 184 MB with ~70 MB live. Collecting every 8 MiB received (~10-15 ms each time) keeps it
 * near what is live. Node exposes `gc` only behind a flag, which can be set at run time for contexts made
 * afterwards; where that fails, V8 keeps its own schedule.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function exposedGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/** Returns `received(bytes)`: counts bytes and collects once `everyBytes` have come since the last time. */
export function collectEvery(everyBytes: number): (bytes: number) => void {
  const gc = exposedGc();
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes || gc === undefined) return;
    since = 0;
    // After this turn: the request that counted is done with its copies by then.
    setImmediate(gc);
  };
}
