/**
 * The wait between tries, for both rooms that wait out a refusal: the REST client (a 429 or a failed call,
 * src/api/transport.ts) and reconcile's walk (a 429 of GET /messages). Here, beside the backoff, because it is
 * the folder both may import; it imports nothing.
 */

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // Only ever registered on a signal.
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
