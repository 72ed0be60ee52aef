/**
 * The live page's stream: server-sent events, one `delivery` message per record. A page that connects
 * (or reconnects) first gets the recent history, oldest first, then each new record as it is made.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Captured } from '../captured.js';

const HISTORY = 500;
/** Comment lines keep idle connections open through proxies and let a closed page be noticed. */
const KEEP_ALIVE_MS = 15_000;

export class LiveFeed {
  readonly #history: Captured[] = [];
  readonly #clients = new Set<ServerResponse>();
  readonly #timer = setInterval(() => this.#broadcast(': keep-alive\n\n'), KEEP_ALIVE_MS).unref();

  publish(record: Captured): void {
    this.#history.push(record);
    if (this.#history.length > HISTORY) this.#history.shift();
    this.#broadcast(message(record));
  }

  /** Serves `GET /events`. */
  subscribe(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    for (const record of this.#history) res.write(message(record));
    this.#clients.add(res);
    req.on('close', () => this.#clients.delete(res));
  }

  close(): void {
    clearInterval(this.#timer);
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }

  #broadcast(text: string): void {
    for (const client of this.#clients) client.write(text);
  }
}

/** One SSE message: JSON has no raw line breaks, so a single `data:` line holds it. */
const message = (record: Captured) => `id: ${record.seq}\nevent: delivery\ndata: ${JSON.stringify(record)}\n\n`;
