/** An inbox with some of its calls slowed down or failed, as a network store's round-trip, a pause or an outage would. */
import type { Inbox } from '../../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `slow` gives each call's delay in ms (0: none); a throw there fails the call. */
export function slowed(inbox: Inbox, slow: (name: string, args: unknown[]) => number): Inbox {
  return new Proxy(inbox, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const ms = slow(String(key), args);
        if (ms > 0) await sleep(ms);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
