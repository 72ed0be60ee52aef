/** An inbox with a hook around its calls: slowed down, failed or held, as a network store's round-trip, a pause or an outage would. */
import type { Inbox } from '../../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `slow` gives each call's delay in ms (0: none); a throw there fails the call. */
export function slowed(inbox: Inbox, slow: (name: string, args: unknown[]) => number): Inbox {
  return hooked(inbox, async (name, args) => {
    const ms = slow(name, args);
    if (ms > 0) await sleep(ms);
  });
}

/**
 * `inbox` with a hook around each call: `before(name, args)` may wait (a store's round trip) or throw (a store
 * failing); the call is made once it settles, then the function it returned (if any) is called.
 */
export function hooked(inbox: Inbox, before: (name: string, args: unknown[]) => Promise<(() => void) | void>): Inbox {
  return new Proxy(inbox, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const after = await before(String(key), args);
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        after?.();
        return result;
      };
    },
  });
}

