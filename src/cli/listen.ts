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
import { createWebhooks, isKnownTrigger, memoryInbox, triggers } from '../index.js';
import { Recorder, type Captured } from './captured.js';
import { collectEvery } from './collect.js';
import { EXIT_OK, failure } from './errors.js';
import { Output } from './output.js';
import { allowedHosts } from './page/guard.js';
import { LiveFeed } from './page/live-feed.js';
import { isPageRequest, servePage, type PageRoutes } from './page/routes.js';
import { httpUrl, port } from './parsers.js';
import { credentialsFrom, deliver, type Credentials } from './post.js';
import { printDelivery, printForward } from './print-delivery.js';
import { authOptions } from './shared-options.js';
import { forwardRefusedHint } from './hints.js';
import { didYouMean } from '../text/suggest.js';
import { summaries } from './summaries.js';

/** How long a refused request's body may take to arrive after the answer before it is recorded as it is. */
const BODY_GRACE_MS = 250;

/** The receiver's body limit (its default `maxBodyBytes`): what a record keeps of a body at most. */
const MAX_BODY_BYTES = 1024 * 1024;

/** How long a key counts as seen, and how many are remembered (the memory inbox's defaults). */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
const DUPLICATE_MAX_KEYS = 10_000;

/** Bodies received between two full garbage collections (collect.ts). */
const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;

interface ListenOptions {
  port: number;
  host: string;
  user?: string;
  password?: string;
  json?: boolean;
  forward?: string;
  events?: string[];
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
  let kept = 0;
  // What the receiver reads at most: past it the answer is 413 and the rest, drained for a moment, is not kept.
  req.on('data', (chunk: Buffer) => {
    if (kept >= MAX_BODY_BYTES) return;
    chunks.push(chunk.subarray(0, MAX_BODY_BYTES - kept));
    kept += chunk.length;
  });
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


/** Every header as received (lower-case names, repeated ones joined as node joins them). */
function requestHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  // A server request lists no header without a value; node joins repeats itself except Set-Cookie's.
  for (const [name, value] of Object.entries(req.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : (value as string);
  }
  return headers;
}

/** `--events a,b`: the triggers to show; a name this version does not know is kept, with a did-you-mean. */
function eventsFilter(names: string[] | undefined, output: Output): ((record: Captured) => boolean) | undefined {
  if (names === undefined) return undefined;
  for (const name of names) {
    if (!isKnownTrigger(name)) output.note(`Note: --events names "${name}", which is not a known trigger.${didYouMean(name, triggers)}`);
  }
  const wanted = new Set(names);
  // A delivery with no readable trigger (refused before its body was read, not JSON) is always shown: it
  // says something is wrong.
  return (record) => record.trigger === undefined || wanted.has(record.trigger);
}

function banner(output: Output, options: ListenOptions, address: AddressInfo, auth: Credentials | undefined): void {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}/`;
  const page = options.host === '0.0.0.0' || options.host === '::' ? `http://localhost:${address.port}/` : base;
  const details = [`Basic auth ${auth ? 'required' : 'off'}`];
  if (options.forward) details.push(`forwarding to ${options.forward}`);
  if (options.events) details.push(`showing only ${options.events.join(', ')}`);
  output.note(
    `Listening on ${base} (${details.join(', ')}).` +
      `\nPOST webhooks to any path; live page at ${page}. Ctrl-C to stop.` +
      `\nFor the platform to reach it, expose the port with a tunnel: cloudflared tunnel --url http://localhost:${address.port}`,
  );
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

interface Listening {
  server: Server;
  routes: PageRoutes;
  /** Stops, giving running handlers 2 s. */
  close(): Promise<void>;
  /** Stops at once (listening failed). */
  abort(): Promise<void>;
}

/** The receiver, the recorder, the feed and the server that joins them; not yet listening. */
function assemble(options: ListenOptions, output: Output, auth: Credentials | undefined): Listening {
  // An inbox makes the receiver recognise repeats by idempotency key (as a durable one would), not by bytes.
  // Refusals and invalid payloads are shown from each delivery's record: the package's own log would repeat them.
  const webhooks = createWebhooks({
    auth: auth ?? false,
    inbox: memoryInbox({ windowMs: DUPLICATE_WINDOW_MS, maxKeys: DUPLICATE_MAX_KEYS }),
    logger: {},
  });
  const middleware = nodeMiddleware(webhooks);
  const recorder = new Recorder(DUPLICATE_WINDOW_MS, DUPLICATE_MAX_KEYS);
  const feed = new LiveFeed<Record<string, string>>();
  const shown = eventsFilter(options.events, output) ?? (() => true);
  const forward = options.forward;
  const collect = collectEvery(COLLECT_EVERY_BYTES);
  let hinted = false;

  async function received(req: IncomingMessage, arrival: ReturnType<typeof tap>, res: ServerResponse) {
    const { rawBody, answer } = await arrival();
    collect(rawBody.length);
    const headers = requestHeaders(req);
    // A server request always has its method and URL (only a hand-made IncomingMessage lacks them).
    const record: Captured = recorder.record({ method: req.method as string, path: req.url as string, status: res.statusCode, answer, headers, rawBody });
    const kept = forwardedHeaders(req);
    if (forward && record.status < 300) {
      record.forward = { url: forward, ...(await deliver(rawBody, { url: forward, headers: kept })) };
      if (record.forward.status === 401 && !hinted) {
        hinted = true; // once: every later delivery would repeat it
        output.note(forwardRefusedHint(forward, kept.authorization !== undefined));
      }
    }
    if (!shown(record)) return;
    output.record(record);
    printDelivery(output, record);
    feed.publish(record, kept);
  }

  const routes: PageRoutes = {
    feed,
    allowed: new Set(),
    ...(auth ? { user: auth.username } : {}),
    ...(forward ? { forward } : {}),
    async resend(seq) {
      const entry = feed.find(seq);
      if (!entry || !forward) return undefined;
      const result = await deliver(entry.record.rawBody, { url: forward, headers: entry.extra });
      printForward(output, { url: forward, ...result }, `↻ #${seq} resent to`);
      return result;
    },
  };
  const server = createServer((req, res) => {
    if (isPageRequest(req)) return servePage(req, res, routes);
    const arrival = tap(req, res);
    middleware(req, res);
    void received(req, arrival, res);
  });
  const close = async (timeoutMs: number) => {
    feed.close();
    server.close();
    server.closeAllConnections();
    await webhooks.close({ timeoutMs });
  };
  return { server, routes, close: () => close(2_000), abort: () => close(0) };
}

export async function listen(options: ListenOptions): Promise<number> {
  const auth = credentialsFrom(options);
  const output = new Output({ json: options.json === true });
  const parts = assemble(options, output, auth);
  let address: AddressInfo;
  try {
    address = await startServer(parts.server, options);
  } catch (error) {
    // The receiver's in-process worker would keep the process alive after the error.
    await parts.abort();
    throw error;
  }
  // Known only now: with --port 0 the port is picked by the system.
  parts.routes.allowed = allowedHosts(options.host, address.port);
  banner(output, options, address, auth);
  await waitForSignal();
  await parts.close();
  return EXIT_OK;
}

/** `--events a,b,c` → the names, blanks dropped. */
const triggerList = (value: string) => value.split(',').map((name) => name.trim()).filter((name) => name !== '');

export function listenCommand(): Command {
  return authOptions(
    new Command('listen')
      .description(summaries.listen.description)
      .option('--port <port>', 'port to listen on (0 picks a free one)', port, 3000)
      .option('--host <host>', 'address to listen on', '127.0.0.1'),
  )
    .option('--json', 'one JSON line per delivery (what `replay` and `validate` read)')
    .option('--forward <url>', 'also send each accepted delivery to your own server, headers included', httpUrl)
    .option('--events <triggers>', 'show and capture only these triggers (comma-separated); others are still answered and forwarded', triggerList)
    .addHelpText(
      'after',
      `
Reaching it from the platform:
  The platform delivers over the internet, so a port on your machine needs a public HTTPS address first. A
  tunnel gives one; point the webhook's URL at it (any path) with the same --user/--password:
    $ cloudflared tunnel --url http://localhost:3000     # prints https://<random>.trycloudflare.com
    $ ngrok http 3000                                    # prints https://<random>.ngrok-free.app
  The live page and its feed answer only on localhost (a request naming another host gets 421), so the
  tunnel's address serves webhooks, never the page.

Forwarding to your own server:
  Run it as Node runs it. \`import\` needs an ES module: a .mjs file, or "type": "module" in the package.json
  next to it. Node 20 does not run TypeScript: \`npx tsx server.ts\` (or compile it first). A Lambda handler
  is served over HTTP by \`chat-webhooks serve ./handler.mjs\`.

Examples:
  $ chat-webhooks listen --port 3000
  $ chat-webhooks listen --user app --password s3cret --forward http://localhost:8080/webhooks
  $ chat-webhooks listen --events message_sent,message_edited
  $ chat-webhooks listen --json > captured.ndjson`,
    )
    .action(async (options: ListenOptions) => {
      process.exitCode = await listen(options);
    });
}
