/**
 * `listen`: a local receiver built on the package's own `createWebhooks` and node:http adapter. Each
 * delivery is answered exactly as an app using the package would answer it, then shown (readable lines or
 * NDJSON), optionally forwarded, and pushed to the live page at `/`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { createWebhooks, memoryInbox } from '../index.js';
import { Recorder, type Captured } from './captured.js';
import { EXIT_OK, failure } from './errors.js';
import { Output } from './output.js';
import { LiveFeed } from './page/live-feed.js';
import { pageHtml } from './page/html.js';
import { httpUrl, port } from './parsers.js';
import { credentialsFrom, deliver } from './post.js';
import { printDelivery } from './print-delivery.js';
import { authOptions } from './shared-options.js';

/** How long a refused request's body may take to arrive after the answer before it is recorded as it is. */
const BODY_GRACE_MS = 250;

/** How long a key counts as seen (the memory inbox's default). */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

interface ListenOptions {
  port: number;
  host: string;
  user?: string;
  password?: string;
  json?: boolean;
  forward?: string;
}

/** The headers of a delivery that a forward keeps: what the app's own receiver checks. */
function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'authorization', 'user-agent']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** Collects the request body and the answer's text as they pass, without taking them from the adapter. */
function tap(req: IncomingMessage, res: ServerResponse): () => Promise<{ rawBody: string; answer: string }> {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  let answer = '';
  const end = res.end as (...args: unknown[]) => ServerResponse;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    if (typeof args[0] === 'string') answer = args[0];
    return end.apply(this, args);
  } as ServerResponse['end'];
  const done = (stream: NodeJS.ReadableStream | NodeJS.WritableStream) => finished(stream).catch(() => undefined);
  return async () => {
    await done(res);
    // A refusal can be answered before the body is in (413 stops reading): the record keeps what came by then.
    await Promise.race([done(req), sleep(BODY_GRACE_MS)]);
    return { rawBody: Buffer.concat(chunks).toString('utf8'), answer };
  };
}

function serveStatic(req: IncomingMessage, res: ServerResponse, feed: LiveFeed): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : pageHtml());
  } else if (path === '/events') {
    feed.subscribe(req, res);
  } else {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Not found. POST webhooks to any path; the live page is at /.\n');
  }
}

async function startServer(server: Server, options: ListenOptions): Promise<AddressInfo> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw failure(`Port ${options.port} is already in use; pick another with --port.`);
    if (code === 'EACCES') throw failure(`Not allowed to listen on port ${options.port}; pick one above 1023 with --port.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw failure(`Cannot listen on host ${options.host}.`);
    throw cause;
  }
  return server.address() as AddressInfo;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

export async function listen(options: ListenOptions): Promise<number> {
  const auth = credentialsFrom(options);
  const output = new Output({ json: options.json === true });
  // An inbox makes the receiver recognise repeats by idempotency key (as a durable one would), not by bytes.
  // Refusals and invalid payloads are shown from each delivery's record: the package's own log would repeat them.
  const webhooks = createWebhooks({
    auth: auth ?? false,
    inbox: memoryInbox({ windowMs: DUPLICATE_WINDOW_MS }),
    logger: {},
  });
  const middleware = nodeMiddleware(webhooks);
  const recorder = new Recorder(DUPLICATE_WINDOW_MS);
  const feed = new LiveFeed();

  async function received(req: IncomingMessage, arrival: () => Promise<{ rawBody: string; answer: string }>, res: ServerResponse) {
    const { rawBody, answer } = await arrival();
    const record: Captured = recorder.record({
      method: req.method ?? 'POST',
      path: req.url ?? '/',
      status: res.statusCode,
      answer,
      rawBody,
    });
    if (options.forward && record.status < 300) {
      const result = await deliver(rawBody, { url: options.forward, headers: forwardedHeaders(req) });
      record.forward = { url: options.forward, ...result };
    }
    output.record(record);
    printDelivery(output, record);
    feed.publish(record);
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') return serveStatic(req, res, feed);
    const arrival = tap(req, res);
    middleware(req, res);
    void received(req, arrival, res);
  });
  let address: AddressInfo;
  try {
    address = await startServer(server, options);
  } catch (error) {
    // The receiver's in-process worker would keep the process alive after the error.
    await webhooks.close({ timeoutMs: 0 });
    throw error;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}/`;
  output.note(
    `Listening on ${base} (Basic auth ${auth ? 'required' : 'off'}${options.forward ? `, forwarding to ${options.forward}` : ''}).` +
      `\nPOST webhooks to any path; live page at ${base}. Ctrl-C to stop.`,
  );

  await waitForSignal();
  feed.close();
  server.close();
  server.closeAllConnections();
  await webhooks.close({ timeoutMs: 2_000 });
  return EXIT_OK;
}

export function listenCommand(): Command {
  return authOptions(
    new Command('listen')
      .description('Receive webhooks locally: print each delivery, its validation and idempotency key, and show them live at /.')
      .option('--port <port>', 'port to listen on (0 picks a free one)', port, 3000)
      .option('--host <host>', 'address to listen on', '127.0.0.1'),
  )
    .option('--json', 'one JSON line per delivery (what `replay` and `validate` read)')
    .option('--forward <url>', "also send each accepted delivery to your own server, headers included", httpUrl)
    .addHelpText(
      'after',
      `
Examples:
  $ chat-webhooks listen --port 3000
  $ chat-webhooks listen --user app --password s3cret --forward http://localhost:8080/webhooks
  $ chat-webhooks listen --json > captured.ndjson`,
    )
    .action(async (options: ListenOptions) => {
      process.exitCode = await listen(options);
    });
}
