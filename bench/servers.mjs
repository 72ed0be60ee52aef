/**
 * One benchmark server per process: `node bench/servers.mjs <name> <port>` (port 0: any free port, reported
 * in the ready message).
 *
 * Names: bare-node, ours-node, ours-node-otel (telemetry on, no SDK), bare-fastify, ours-fastify, bare-express, ours-express, bare-fetch, ours-fetch,
 * octokit. Every server answers POST /webhooks; a "handler" counts calls (`webhooks.on('message_sent')` for
 * ours, the route itself for bare servers, `webhooks.on('issue_comment')` for octokit).
 *
 * The measured request path has no bench-only route: counters and memory figures go to the parent over the
 * IPC channel (`{ type: 'stats' }`, `{ type: 'gc' }`, `{ type: 'exit' }`), and the server says
 * `{ type: 'ready' }` once it listens. Run by hand (no IPC), it only serves.
 */
import http from 'node:http';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { CREDENTIALS, GITHUB_SECRET, PATH } from './lib/payloads.mjs';

const [name, portArg] = process.argv.slice(2);
const port = Number(portArg ?? 3000);

let calls = 0;
let errors = 0;
/** With BENCH_SAMPLE_EVERY=n, memory is sampled every n handler calls (for the RSS-over-requests run). */
const sampleEvery = Number(process.env.BENCH_SAMPLE_EVERY ?? 0);
let samples = [];
function count() {
  calls += 1;
  if (sampleEvery && calls % sampleEvery === 0) {
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    samples.push({ calls, rss, heapUsed, heapTotal, external: external + arrayBuffers });
  }
}
const errorCodes = {};
const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

async function ours(extra = {}) {
  const { createWebhooks } = await import('chat-webhooks');
  // Default options (dedupe on, default limits and timeouts): the configuration users get.
  const webhooks = createWebhooks({ auth: CREDENTIALS, logger: { warn() {}, error() {} }, ...extra });
  webhooks.on('message_sent', () => {
    count();
  });
  webhooks.onError((error) => {
    errors++;
    errorCodes[error.code] = (errorCodes[error.code] ?? 0) + 1;
  });
  return webhooks;
}

/** Reads a node request body, as small bare servers do. */
function readBody(req, done) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
}

/**
 * The minimal node:http → fetch `Request` bridge both fetch servers share: the body is buffered, headers are
 * copied, the `Response` is written back. Only the handler differs.
 */
function fetchBridge(handler) {
  return (req, res) => {
    readBody(req, async (body) => {
      const headers = new Headers();
      const raw = req.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
      const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body });
      const response = await handler(request);
      const out = {};
      response.headers.forEach((value, key) => {
        out[key] = value;
      });
      res.writeHead(response.status, out);
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  };
}

const servers = {
  async 'bare-node'() {
    return http.createServer((req, res) => {
      if (req.url !== PATH) {
        res.writeHead(404, TEXT).end('Not found.');
        return;
      }
      readBody(req, (body) => {
        JSON.parse(body);
        count();
        res.writeHead(200, TEXT);
        res.end('OK');
      });
    });
  },

  async 'ours-node'() {
    const { nodeMiddleware } = await import('chat-webhooks/node');
    return http.createServer(nodeMiddleware(await ours(), { path: PATH }));
  },

  /** Telemetry on, but no OpenTelemetry SDK registered: what the API's no-op tracer and meter cost. */
  async 'ours-node-otel'() {
    const { nodeMiddleware } = await import('chat-webhooks/node');
    const { openTelemetry } = await import('chat-webhooks/otel');
    return http.createServer(nodeMiddleware(await ours({ telemetry: openTelemetry() }), { path: PATH }));
  },

  async 'bare-fastify'() {
    const { default: Fastify } = await import('fastify');
    const app = Fastify({ logger: false });
    app.post(PATH, async () => {
      count();
      return 'OK';
    });
    return app;
  },

  async 'ours-fastify'() {
    const { default: Fastify } = await import('fastify');
    const { fastifyWebhooks } = await import('chat-webhooks/fastify');
    const app = Fastify({ logger: false });
    await app.register(fastifyWebhooks, { webhooks: await ours(), path: PATH });
    return app;
  },

  async 'bare-express'() {
    const { default: express } = await import('express');
    const app = express();
    app.use(express.json());
    app.post(PATH, (req, res) => {
      if (req.body) count();
      res.send('OK');
    });
    return http.createServer(app);
  },

  async 'ours-express'() {
    const { default: express } = await import('express');
    const { expressMiddleware } = await import('chat-webhooks/express');
    const app = express();
    app.post(PATH, expressMiddleware(await ours()));
    return http.createServer(app);
  },

  async 'bare-fetch'() {
    return http.createServer(
      fetchBridge(async (request) => {
        JSON.parse(await request.text());
        count();
        return new Response('OK', { status: 200, headers: TEXT });
      }),
    );
  },

  async 'ours-fetch'() {
    const { fetchHandler } = await import('chat-webhooks/fetch');
    return http.createServer(fetchBridge(fetchHandler(await ours())));
  },

  async octokit() {
    const { Webhooks, createNodeMiddleware } = await import('@octokit/webhooks');
    const webhooks = new Webhooks({ secret: GITHUB_SECRET });
    webhooks.on('issue_comment', () => {
      count();
    });
    webhooks.onError(() => {
      errors++;
    });
    return http.createServer(createNodeMiddleware(webhooks, { path: PATH, log: { debug() {}, info() {}, warn() {}, error() {} } }));
  },
};

if (!servers[name]) {
  console.error(`Unknown server "${name}". One of: ${Object.keys(servers).join(', ')}`);
  process.exit(2);
}

let gcRuns = 0;
if (process.env.BENCH_COUNT_GC === '1') {
  new PerformanceObserver((list) => {
    gcRuns += list.getEntries().length;
  }).observe({ entryTypes: ['gc'] });
}

function stats() {
  return {
    calls,
    errors,
    errorCodes,
    gcRuns,
    memory: process.memoryUsage(),
    cpu: process.cpuUsage(),
    elu: performance.eventLoopUtilization(),
    time: performance.now(),
    // Same monotonic clock, in µs, as the timestamps of a V8 CPU profile (used to cut the warm-up out of one).
    hrtimeUs: Number(process.hrtime.bigint() / 1000n),
  };
}

const server = await servers[name]();
if (typeof server.listen === 'function' && server instanceof http.Server) {
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
} else {
  // Fastify
  await server.listen({ port, host: '127.0.0.1' });
  server.server.keepAliveTimeout = 60_000;
}

function listeningPort() {
  return (server.server ?? server).address().port;
}

if (process.send) {
  process.on('message', (message) => {
    if (message?.type === 'stats') process.send({ type: 'stats', id: message.id, stats: stats() });
    else if (message?.type === 'samples') {
      process.send({ type: 'samples', id: message.id, samples });
      samples = [];
    }
    else if (message?.type === 'gc') {
      globalThis.gc?.();
      process.send({ type: 'stats', id: message.id, stats: stats() });
    } else if (message?.type === 'exit') process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', pid: process.pid, port: listeningPort() });
} else {
  console.log(`${name} listening on http://127.0.0.1:${listeningPort()}${PATH}`);
}
