/**
 * `memoryInbox`: the inbox that lives in this process. NOT DURABLE: whatever it holds (events not yet
 * handled, the duplicate window) is gone when the process stops. It gives one process the same behaviour
 * as the durable stores (leases, retries, dead entries, admin), for development, tests, and deployments
 * that accept losing in-flight events on a crash. For "nothing acknowledged is ever lost", use
 * `sqliteInbox` (one machine) or `redisInbox` (many).
 */
import {
  checkState,
  DEFAULT_LIST_LIMIT,
  newToken,
  type ClaimOptions,
  type FailOutcome,
  type Inbox,
  type InboxClaim,
  type InboxEntry,
  type InboxListing,
  type InboxState,
  type InboxStats,
  type ListOptions,
  type PutResult,
} from './port.js';

export interface MemoryInboxOptions {
  /** How many handled keys are remembered as duplicates at most; the oldest go first. Default 10 000. */
  maxKeys?: number;
  /** How long a handled key is remembered, from when it was received. Default 10 minutes. */
  windowMs?: number;
}

interface Slot {
  entry: InboxEntry | undefined;
  key: string;
  trigger: string;
  receivedAt: number;
  state: InboxState;
  attempts: number;
  /** pending: due time; running: lease end; done: when it is forgotten. */
  due: number;
  token: string;
  lastError?: string;
}

const STORED: Promise<PutResult> = Promise.resolve('stored');
const DUPLICATE: Promise<PutResult> = Promise.resolve('duplicate');

export function memoryInbox(options: MemoryInboxOptions = {}): Inbox {
  const maxKeys = options.maxKeys ?? 10_000;
  const windowMs = options.windowMs ?? 10 * 60 * 1000;
  if (!(Number.isSafeInteger(maxKeys) && maxKeys > 0)) throw new TypeError('memoryInbox: `maxKeys` must be a positive whole number.');
  if (!(windowMs > 0)) throw new TypeError('memoryInbox: `windowMs` must be a positive number of milliseconds.');

  /** Every known key; Map order is insertion order, which for done slots is close to oldest first. */
  const slots = new Map<string, Slot>();
  /** Keys of pending slots that are due now, oldest first (a queue with a moving head). */
  let ready: string[] = [];
  let head = 0;
  const delayed = new Set<Slot>();
  const running = new Set<Slot>();
  const done = new Set<Slot>();
  let deadCount = 0;
  let closed = false;
  const waiters = new Set<() => void>();

  function wake(): void {
    for (const waiter of waiters) waiter();
    waiters.clear();
  }

  function forgetExpired(now: number): void {
    for (const slot of done) {
      if (slot.due > now && done.size <= maxKeys) break;
      done.delete(slot);
      slots.delete(slot.key);
    }
  }

  function makeReady(slot: Slot): void {
    slot.state = 'pending';
    ready.push(slot.key);
  }

  function take(leaseMs: number): InboxClaim | undefined {
    const now = Date.now();
    for (const slot of delayed) {
      if (slot.due <= now) {
        delayed.delete(slot);
        makeReady(slot);
      }
    }
    for (const slot of running) {
      // A lease that ran out: its holder died or hung. The next claim counts as another attempt.
      if (slot.due <= now) {
        running.delete(slot);
        makeReady(slot);
      }
    }
    while (head < ready.length) {
      const key = ready[head++] as string;
      const slot = slots.get(key);
      if (!slot || slot.state !== 'pending' || delayed.has(slot)) continue;
      if (head > 1024 && head * 2 > ready.length) {
        ready = ready.slice(head);
        head = 0;
      }
      slot.state = 'running';
      slot.attempts += 1;
      slot.due = now + leaseMs;
      slot.token = newToken();
      running.add(slot);
      const entry = slot.entry as InboxEntry;
      return { ...entry, attempt: slot.attempts, token: slot.token };
    }
    ready = [];
    head = 0;
    return undefined;
  }

  /** The slot of a claim still held by its holder. */
  function held(claim: InboxClaim): Slot | undefined {
    const slot = slots.get(claim.key);
    return slot && slot.state === 'running' && slot.token === claim.token ? slot : undefined;
  }

  function nextDue(): number {
    let next = Infinity;
    for (const slot of delayed) next = Math.min(next, slot.due);
    for (const slot of running) next = Math.min(next, slot.due);
    return next;
  }

  function ensureOpen(): void {
    if (closed) throw new Error('The memory inbox is closed.');
  }

  function stats(): InboxStats {
    forgetExpired(Date.now());
    const pending = slots.size - running.size - done.size - deadCount;
    return { pending, running: running.size, done: done.size, dead: deadCount };
  }

  const inbox: Inbox = {
    kind: 'memory',
    durable: false,
    put(entry) {
      if (closed) return Promise.reject(new Error('The memory inbox is closed.'));
      const existing = slots.get(entry.key);
      if (existing) {
        if (existing.state !== 'done' || existing.due > Date.now()) return DUPLICATE;
        done.delete(existing);
        slots.delete(entry.key);
      }
      const slot: Slot = {
        entry,
        key: entry.key,
        trigger: entry.trigger,
        receivedAt: entry.receivedAt,
        state: 'pending',
        attempts: 0,
        due: 0,
        token: '',
      };
      slots.set(entry.key, slot);
      ready.push(entry.key);
      if (waiters.size > 0) wake();
      return STORED;
    },
    async claim({ leaseMs, waitMs, signal }: ClaimOptions) {
      ensureOpen();
      const deadline = Date.now() + waitMs;
      for (;;) {
        const claim = take(leaseMs);
        if (claim) return claim;
        const now = Date.now();
        if (now >= deadline || signal?.aborted || closed) return undefined;
        await new Promise<void>((resolve) => {
          const wakeUp = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', wakeUp);
            waiters.delete(wakeUp);
            resolve();
          };
          const timer = setTimeout(wakeUp, Math.max(1, Math.min(deadline, nextDue()) - now));
          signal?.addEventListener('abort', wakeUp, { once: true });
          waiters.add(wakeUp);
        });
      }
    },
    async renew(claim, leaseMs) {
      const slot = held(claim);
      if (slot) slot.due = Date.now() + leaseMs;
      return slot !== undefined;
    },
    async complete(claim) {
      const slot = held(claim);
      if (!slot) return;
      running.delete(slot);
      slot.state = 'done';
      slot.entry = undefined;
      slot.due = slot.receivedAt + windowMs;
      // Re-inserted so the done slots stay in the order they were finished in (the eviction order).
      slots.delete(slot.key);
      slots.set(slot.key, slot);
      done.add(slot);
      forgetExpired(Date.now());
    },
    async fail(claim, outcome: FailOutcome) {
      const slot = held(claim);
      if (!slot) return;
      running.delete(slot);
      slot.lastError = outcome.error;
      if ('dead' in outcome) {
        slot.state = 'dead';
        deadCount += 1;
      } else {
        slot.state = 'pending';
        slot.due = outcome.retryAt;
        delayed.add(slot);
        if (waiters.size > 0) wake();
      }
    },
    async stats() {
      return stats();
    },
    async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions) {
      checkState(state);
      forgetExpired(Date.now());
      const listed: InboxListing[] = [];
      for (const slot of slots.values()) {
        if (listed.length >= limit) break;
        if (slot.state !== state) continue;
        listed.push({
          key: slot.key,
          trigger: slot.trigger,
          state: slot.state,
          receivedAt: slot.receivedAt,
          attempts: slot.attempts,
          ...(slot.lastError === undefined ? {} : { lastError: slot.lastError }),
          ...(slot.entry ? { event: slot.entry.event, rawBody: slot.entry.rawBody } : {}),
        });
      }
      return listed;
    },
    async retry(keys) {
      let count = 0;
      const chosen = keys ? keys.map((key) => slots.get(key)) : [...slots.values()];
      for (const slot of chosen) {
        if (slot?.state !== 'dead') continue;
        deadCount -= 1;
        slot.attempts = 0;
        makeReady(slot);
        count += 1;
      }
      if (count > 0) wake();
      return count;
    },
    async purge({ state }) {
      checkState(state, false);
      let count = 0;
      for (const slot of [...slots.values()]) {
        if (slot.state !== state) continue;
        slots.delete(slot.key);
        delayed.delete(slot);
        done.delete(slot);
        if (state === 'dead') deadCount -= 1;
        count += 1;
      }
      return count;
    },
    async close() {
      closed = true;
      wake();
    },
  };
  return inbox;
}
