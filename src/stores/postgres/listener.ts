/**
 * Waiting workers of the PostgreSQL inbox wake on `NOTIFY`: every put batch that stored something, every
 * retry and every failure put back for later notifies the inbox's channel when its transaction commits. One
 * connection per process listens (a plain `pg.Client`, outside the pool: a pooled connection would be handed
 * to queries and lose its LISTEN). A lost connection (the server restarted, a network cut) is made again with
 * a growing pause and LISTEN armed again; every waiter is then woken, since notifications sent meanwhile are
 * lost. Waiters also wake on their own timer, so a missed notification costs a delay, never an entry.
 *
 * `generation` counts notifications (and reconnections): a claimer notes it before looking for work and,
 * finding none, waits only if it has not moved since, so a commit landing between its look and its wait is
 * not slept through.
 */
import type { Client } from 'pg';
import { Waiters } from '../kit/index.js';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

export class Listener {
  #generation = 0;
  readonly #waiters = new Waiters();
  readonly #newClient: () => Client;
  readonly #channel: string;
  #client: Client | undefined;
  #connecting: Promise<void> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #failures = 0;
  #closed = false;

  /** `newClient` makes an unconnected client with the inbox's connection settings. */
  constructor(newClient: () => Client, channel: string) {
    this.#newClient = newClient;
    this.#channel = channel;
  }

  get generation(): number {
    return this.#generation;
  }

  /** Connects (once; again after a loss). Resolves even when the connection failed: waiters poll meanwhile. */
  start(): Promise<void> {
    if (this.#closed || this.#client) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  /** Waits up to `ms` for a notification newer than `seen`, a reconnection, an abort, or close(). */
  async wait(seen: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#generation !== seen || this.#closed) return;
    await this.#waiters.wait(ms, signal);
  }

  /** Wakes every waiter (new work of this process, a reconnection, close). */
  wakeAll(): void {
    this.#generation += 1;
    this.#waiters.wakeAll();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    this.wakeAll();
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = this.#newClient();
    // A lost connection's 'error' is followed by its 'end', which handles the loss; without a listener, an
    // 'error' event would end the process.
    client.on('error', () => undefined);
    client.on('end', () => this.#lost(client));
    // The connection LISTENs to this channel only: every notification it gets is the inbox's.
    client.on('notification', (message) => this.#notified(Number(message.payload) || 1));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"`);
    } catch {
      // Its 'error' and 'end' events find it is not the listening client (#lost): nothing else to undo.
      client.end().catch(() => undefined);
      this.#scheduleReconnect();
      return;
    }
    // Closed meanwhile: close() awaits this connection (#connecting), then ends it.
    this.#client = client;
    this.#failures = 0;
    // Anything committed while no connection listened was not heard: everyone looks again.
    this.wakeAll();
  }

  #lost(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    this.#scheduleReconnect();
  }

  /** Once closed, the retry finds nothing to do (start()). */
  #scheduleReconnect(): void {
    this.#failures += 1;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (this.#failures - 1));
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => void this.start(), delay);
    this.#retryTimer.unref();
  }

  /** `count` new entries: as many waiters wake (they each take one); the rest keep waiting. */
  #notified(count: number): void {
    this.#generation += 1;
    this.#waiters.wake(count);
  }
}
