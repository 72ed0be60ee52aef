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
} from '../delivery/port.js';
import { claimLoop, DEFAULT_MEMORY_WINDOW_MS, LocalCoordination, newToken, Waiters, windowOption, type ClaimSource } from './kit/index.js';

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

/**
 * Creates the in-process inbox. Not durable: see the top of this file.
 *
 * @example
 * ```ts
 * import { createWebhooks, memoryInbox } from 'chat-webhooks';
 *
 * // Tests and development: the same receiver and worker code as with a durable inbox.
 * const webhooks = createWebhooks({ auth: false, inbox: memoryInbox({ windowMs: 60_000 }) });
 * ```
 */
export function memoryInbox(options: MemoryInboxOptions = {}): Inbox {
  return new MemoryInbox(options);
}

class MemoryInbox implements Inbox {
  readonly kind = 'memory';
  readonly durable = false;
  readonly #maxKeys: number;
  readonly #windowMs: number;
  /** Every known key; Map order is insertion order, which for done slots is close to oldest first. */
  readonly #slots = new Map<string, Slot>();
  /** Keys of pending slots that are due now, oldest first (a queue with a moving head). */
  #ready: string[] = [];
  #head = 0;
  readonly #delayed = new Set<Slot>();
  readonly #running = new Set<Slot>();
  readonly #done = new Set<Slot>();
  #deadCount = 0;
  #closed = false;
  readonly #waiters = new Waiters();
  readonly #coordination = new LocalCoordination();
  /** Its claims wait on a timer set for the next due entry, woken by a put (one claim) or a retry (all). */
  readonly #source: ClaimSource = {
    take: (leaseMs) => this.#take(leaseMs),
    wait: (left, signal) => this.#waiters.wait(Math.max(1, Math.min(left, this.#nextDue() - Date.now())), signal),
    stopped: () => this.#closed,
  };

  constructor({ maxKeys = 10_000, windowMs }: MemoryInboxOptions) {
    if (!(Number.isSafeInteger(maxKeys) && maxKeys > 0)) throw new TypeError('memoryInbox: `maxKeys` must be a positive whole number.');
    this.#maxKeys = maxKeys;
    this.#windowMs = windowOption('memoryInbox', windowMs, DEFAULT_MEMORY_WINDOW_MS);
  }

  put(entry: InboxEntry): Promise<PutResult> {
    if (this.#closed) return Promise.reject(new Error('The memory inbox is closed.'));
    const existing = this.#slots.get(entry.key);
    if (existing) {
      if (existing.state !== 'done' || existing.due > Date.now()) return DUPLICATE;
      this.#done.delete(existing);
      this.#slots.delete(entry.key);
    }
    const { key, trigger, receivedAt } = entry;
    this.#slots.set(key, { entry, key, trigger, receivedAt, state: 'pending', attempts: 0, due: 0, token: '' });
    this.#ready.push(key);
    this.#waiters.wake();
    return STORED;
  }

  /** A claim waiting when the inbox closes ends with nothing; one made after it rejects. */
  async claim(options: ClaimOptions): Promise<InboxClaim | undefined> {
    if (this.#closed) throw new Error('The memory inbox is closed.');
    return claimLoop(this.#source, options);
  }

  async renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    const slot = this.#held(claim);
    if (slot) slot.due = Date.now() + leaseMs;
    return slot !== undefined;
  }

  async complete(claim: InboxClaim): Promise<void> {
    const slot = this.#held(claim);
    if (!slot) return;
    this.#running.delete(slot);
    slot.state = 'done';
    slot.entry = undefined;
    slot.due = slot.receivedAt + this.#windowMs;
    // Re-inserted so the done slots stay in the order they were finished in (the eviction order).
    this.#slots.delete(slot.key);
    this.#slots.set(slot.key, slot);
    this.#done.add(slot);
    this.#forgetExpired(Date.now());
  }

  async fail(claim: InboxClaim, outcome: FailOutcome): Promise<void> {
    const slot = this.#held(claim);
    if (!slot) return;
    this.#running.delete(slot);
    slot.lastError = outcome.error;
    if ('dead' in outcome) {
      slot.state = 'dead';
      this.#deadCount += 1;
    } else {
      slot.state = 'pending';
      slot.due = outcome.retryAt;
      this.#delayed.add(slot);
      this.#waiters.wakeAll();
    }
  }

  async stats(): Promise<InboxStats> {
    this.#forgetExpired(Date.now());
    const running = this.#running.size;
    const done = this.#done.size;
    const dead = this.#deadCount;
    return { pending: this.#slots.size - running - done - dead, running, done, dead };
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('The memory inbox is closed.');
  }

  async oldestPendingAt(): Promise<number | undefined> {
    let oldest: number | undefined;
    for (const slot of this.#slots.values()) {
      if (slot.state === 'pending' && (oldest === undefined || slot.receivedAt < oldest)) oldest = slot.receivedAt;
    }
    return oldest;
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    checkState(state);
    this.#forgetExpired(Date.now());
    const listed: InboxListing[] = [];
    for (const slot of this.#slots.values()) {
      if (listed.length >= limit) break;
      if (slot.state === state) listed.push(listingOf(slot));
    }
    return listed;
  }

  async retry(keys?: readonly string[]): Promise<number> {
    let count = 0;
    const chosen = keys ? keys.map((key) => this.#slots.get(key)) : [...this.#slots.values()];
    for (const slot of chosen) {
      if (slot?.state !== 'dead') continue;
      this.#deadCount -= 1;
      slot.attempts = 0;
      slot.state = 'pending';
      this.#ready.push(slot.key);
      count += 1;
    }
    if (count > 0) this.#waiters.wakeAll();
    return count;
  }

  async purge({ state }: { state: Exclude<InboxState, 'running'> }): Promise<number> {
    checkState(state, false);
    let count = 0;
    for (const slot of [...this.#slots.values()]) {
      if (slot.state !== state) continue;
      this.#slots.delete(slot.key);
      this.#delayed.delete(slot);
      this.#done.delete(slot);
      if (state === 'dead') this.#deadCount -= 1;
      count += 1;
    }
    return count;
  }

  async tryLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.#coordination.tryLock(name, holder, ttlMs);
  }

  async unlock(name: string, holder: string): Promise<void> {
    this.#coordination.unlock(name, holder);
  }

  async mark(name: string): Promise<number | undefined> {
    return this.#coordination.mark(name);
  }

  async setMark(name: string, value: number): Promise<void> {
    this.#coordination.setMark(name, value);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#waiters.wakeAll();
  }

  #forgetExpired(now: number): void {
    for (const slot of this.#done) {
      if (slot.due > now && this.#done.size <= this.#maxKeys) break;
      this.#done.delete(slot);
      this.#slots.delete(slot.key);
    }
  }

  /** Moves due retries and lapsed leases to the ready queue. A lapsed lease's next claim is another attempt. */
  #promoteDue(now: number): void {
    for (const slots of [this.#delayed, this.#running]) {
      for (const slot of slots) {
        if (slot.due > now) continue;
        slots.delete(slot);
        slot.state = 'pending';
        this.#ready.push(slot.key);
      }
    }
  }

  #take(leaseMs: number): InboxClaim | undefined {
    const now = Date.now();
    this.#promoteDue(now);
    while (this.#head < this.#ready.length) {
      const slot = this.#slots.get(this.#ready[this.#head++] as string);
      if (!slot || slot.state !== 'pending' || this.#delayed.has(slot)) continue;
      // Dropping the consumed head only bounds the queue's memory: which key comes next is the same either way.
      if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
        this.#ready = this.#ready.slice(this.#head);
        this.#head = 0;
      }
      slot.state = 'running';
      slot.attempts += 1;
      slot.due = now + leaseMs;
      slot.token = newToken();
      this.#running.add(slot);
      return { ...(slot.entry as InboxEntry), attempt: slot.attempts, token: slot.token };
    }
    this.#ready = [];
    this.#head = 0;
    return undefined;
  }

  /** The slot of a claim still held by its holder. */
  #held(claim: InboxClaim): Slot | undefined {
    const slot = this.#slots.get(claim.key);
    return slot && slot.state === 'running' && slot.token === claim.token ? slot : undefined;
  }

  #nextDue(): number {
    let next = Infinity;
    for (const slot of this.#delayed) next = Math.min(next, slot.due);
    for (const slot of this.#running) next = Math.min(next, slot.due);
    return next;
  }
}

function listingOf(slot: Slot): InboxListing {
  return {
    key: slot.key,
    trigger: slot.trigger,
    state: slot.state,
    receivedAt: slot.receivedAt,
    attempts: slot.attempts,
    ...(slot.lastError === undefined ? {} : { lastError: slot.lastError }),
    ...(slot.entry ? { event: slot.entry.event, rawBody: slot.entry.rawBody } : {}),
  };
}
