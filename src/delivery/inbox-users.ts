/**
 * Who closes an inbox: the last receiver or worker of this process that was given it, when it closes. An
 * inbox made where it is passed (`createWorker({ inbox: redisInbox({ url }) })`) has no other owner, and an
 * inbox left open keeps the process alive (Redis sockets, a database pool): after a SIGTERM handler that
 * closed the worker, the process would wait to be killed. Counting users keeps one inbox shared by a receiver
 * and a worker open until both closed. A user made with `closeInbox: false` holds the inbox open for good:
 * whoever made it closes it (`await inbox.close()`), and may go on using it after the worker closed.
 *
 * Works through the port alone (`close()`), so every store, present or future, is closed the same way.
 */
import type { Inbox } from './port.js';

interface Users {
  count: number;
  /** Some user said `closeInbox: false`: nobody here closes it. */
  keptOpen: boolean;
}

const usersOf = new WeakMap<Inbox, Users>();

/**
 * Counts one more user of `inbox`; the function returned ends that use (once; later calls do nothing) and
 * closes the inbox when it was the last one and nobody asked to keep it open.
 */
export function useInbox(inbox: Inbox, closeInbox = true): () => Promise<void> {
  let users = usersOf.get(inbox);
  if (!users) usersOf.set(inbox, (users = { count: 0, keptOpen: false }));
  if (!closeInbox) {
    users.keptOpen = true;
    return async () => undefined;
  }
  const counted = users;
  counted.count += 1;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    counted.count -= 1;
    if (counted.count > 0 || counted.keptOpen) return;
    usersOf.delete(inbox);
    await inbox.close();
  };
}
