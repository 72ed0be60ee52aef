/**
 * The live page's stream: server-sent events, one `delivery` message per record. A page that connects gets
 * the records after the last one it has (`?after=` on the first connection, `Last-Event-ID` on a reconnect),
 * oldest first, then each new record as it is made.
 *
 * `listen` is meant to be left running, so what it holds is bounded whatever the pages do:
 * - the history keeps at most `maxRecords` records and `maxBytes` of their messages, the oldest go first;
 * - the history is the only queue: each subscriber is a position in it, written to only while its socket
 *   takes more (`write()` returning true, then `drain`). A page that stops reading holds at most the one
 *   message its socket was given; when it reads again it continues from the oldest record still kept
 *   (it skips ahead past what was dropped meanwhile);
 * - at most `maxSubscribers` pages at a time: a new one closes the longest-connected (its EventSource
 *   reconnects if it is still open).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Captured } from '../captured.js';

export interface FeedLimits {
  maxRecords: number;
  maxBytes: number;
  maxSubscribers: number;
}

export const FEED_LIMITS: FeedLimits = { maxRecords: 500, maxBytes: 8 * 1024 * 1024, maxSubscribers: 16 };

/** Comment lines keep idle connections open through proxies and let a closed page be noticed. */
const KEEP_ALIVE_MS = 15_000;

interface Entry<Private> {
  seq: number;
  /** The SSE message, encoded once: every subscriber is written this same buffer (a string would be encoded
   * again for each), and the record is kept only in here. */
  message: Buffer;
  /** Where the record's JSON starts in `message` (it ends before the final blank line). */
  dataStart: number;
  /** Kept beside the record, never sent to a page (the unmasked headers a resend needs). */
  extra: Private;
}

interface Subscriber {
  res: ServerResponse;
  /** The seq of the next record it should get. */
  next: number;
  /** Its socket's buffer is full: wait for `drain`. */
  blocked: boolean;
}

export class LiveFeed<Private = undefined> {
  /** Told to a page on connect, and part of each event id: a page that outlived a restart starts over. */
  readonly instance = randomBytes(4).toString('hex');
  readonly #history: Entry<Private>[] = [];
  #bytes = 0;
  /** The highest seq dropped from the history. */
  #droppedThrough = 0;
  readonly #subscribers = new Set<Subscriber>();
  readonly #timer = setInterval(() => this.#keepAlive(), KEEP_ALIVE_MS).unref();

  constructor(readonly limits: FeedLimits = FEED_LIMITS) {}

  publish(record: Captured, extra: Private): void {
    const head = `id: ${this.instance}.${record.seq}\nevent: delivery\ndata: `;
    const message = Buffer.from(`${head}${JSON.stringify(record)}\n\n`);
    this.#history.push({ seq: record.seq, message, dataStart: Buffer.byteLength(head), extra });
    this.#bytes += message.length;
    // The newest record stays even alone past maxBytes (a body is at most the receiver's limit).
    while (this.#history.length > 1 && (this.#history.length > this.limits.maxRecords || this.#bytes > this.limits.maxBytes)) {
      const dropped = this.#history.shift() as Entry<Private>;
      this.#bytes -= dropped.message.length;
      this.#droppedThrough = dropped.seq;
    }
    for (const subscriber of this.#subscribers) this.#pump(subscriber);
  }

  /** The newest records, oldest first, whose messages fit in `maxBytes`: what the page is rendered with. */
  recent(maxBytes: number): Captured[] {
    const records: Captured[] = [];
    let bytes = 0;
    for (let i = this.#history.length - 1; i >= 0; i--) {
      const entry = this.#history[i] as Entry<Private>;
      bytes += entry.message.length;
      if (bytes > maxBytes) break;
      records.unshift(recordOf(entry));
    }
    return records;
  }

  /** A record still kept, with what was kept beside it. */
  find(seq: number): { record: Captured; extra: Private } | undefined {
    const entry = this.#history.find((kept) => kept.seq === seq);
    return entry && { record: recordOf(entry), extra: entry.extra };
  }

  get size(): { records: number; bytes: number; subscribers: number } {
    return { records: this.#history.length, bytes: this.#bytes, subscribers: this.#subscribers.size };
  }

  /** Serves `GET /events`. */
  subscribe(req: IncomingMessage, res: ServerResponse, after: number, headers: Record<string, string>): void {
    if (this.#subscribers.size >= this.limits.maxSubscribers) {
      const oldest = this.#subscribers.values().next().value as Subscriber;
      this.#drop(oldest);
    }
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify({ instance: this.instance })}\n\n`);
    const subscriber: Subscriber = { res, next: this.#resumeAfter(req, after) + 1, blocked: false };
    this.#subscribers.add(subscriber);
    res.on('drain', () => {
      subscriber.blocked = false;
      this.#pump(subscriber);
    });
    req.on('close', () => this.#subscribers.delete(subscriber));
    this.#pump(subscriber);
  }

  close(): void {
    clearInterval(this.#timer);
    for (const subscriber of this.#subscribers) subscriber.res.end();
    this.#subscribers.clear();
  }

  /** A reconnect's `Last-Event-ID` (`<instance>.<seq>`) wins over `?after=`; one from another run counts as none. */
  #resumeAfter(req: IncomingMessage, after: number): number {
    const last = req.headers['last-event-id'];
    if (typeof last !== 'string') return after;
    const [instance, seq] = last.split('.');
    return instance === this.instance && Number.isSafeInteger(Number(seq)) ? Math.max(after, Number(seq)) : 0;
  }

  /** Writes what the subscriber has not had yet, for as long as its socket takes it. */
  #pump(subscriber: Subscriber): void {
    if (subscriber.blocked || subscriber.res.destroyed) return;
    if (subscriber.next <= this.#droppedThrough) {
      // Told, so the page can say that it missed some; it goes on from the oldest record kept.
      subscriber.res.write(`event: skipped\ndata: ${JSON.stringify({ through: this.#droppedThrough })}\n\n`);
      subscriber.next = this.#droppedThrough + 1;
    }
    for (const entry of this.#history) {
      if (entry.seq < subscriber.next) continue;
      subscriber.next = entry.seq + 1;
      if (!subscriber.res.write(entry.message)) {
        subscriber.blocked = true;
        return;
      }
    }
  }

  #keepAlive(): void {
    for (const subscriber of this.#subscribers) if (!subscriber.blocked) subscriber.res.write(': keep-alive\n\n');
  }

  /** Destroyed, not ended: an ended socket nobody reads would keep its unsent buffer. */
  #drop(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    subscriber.res.destroy();
  }
}

const recordOf = (entry: Entry<unknown>) =>
  JSON.parse(entry.message.toString('utf8', entry.dataStart, entry.message.length - 2)) as Captured;
