// A Hono app receiving the chat platform's webhooks at POST /webhooks, through the fetch handler.
// The same `app` runs unchanged where Hono runs: `export default app` on Cloudflare Workers and Bun,
// `Deno.serve(app.fetch)` on Deno; on Node, @hono/node-server's `serve({ fetch: app.fetch, port })`. This file
// bridges node:http to app.fetch itself, so that it needs nothing but hono.
// Run: npm run build && node examples/hono.mjs   (WEBHOOK_USERNAME, WEBHOOK_PASSWORD and PORT to change defaults)
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { createWebhooks } from 'chat-webhooks';
import { fetchHandler } from 'chat-webhooks/fetch';

const port = Number(process.env.PORT ?? 3000);
const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';
console.log(`Basic auth: username "${username}", password "${password}"`);

const webhooks = createWebhooks({ auth: { username, password } });
webhooks.onAny((event) => console.log(`${event.trigger}: ${JSON.stringify(event.data).slice(0, 100)}`));
webhooks.onError((error) => console.log(`rejected ${error.code}: ${error.message}`));

const handler = fetchHandler(webhooks, { path: '/webhooks' });
// c.executionCtx throws outside Workers; on Workers it lets the handlers finish after the answer (waitUntil).
const executionCtxOf = (c) => {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
};

export const app = new Hono();
app.post('/webhooks', (c) => handler(c.req.raw, executionCtxOf(c)));
app.get('/health', (c) => c.text('ok'));

const server = createServer(async (req, res) => {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
    method: req.method,
    headers,
    body: hasBody ? Readable.toWeb(req) : undefined,
    duplex: 'half',
  });
  const response = await app.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.on('error', cannotListen);
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close(); // idle keep-alive connections close too; the process exits once the handlers finished
    await webhooks.close({ timeoutMs: 5000 });
  });
}

/** A busy port (or any failure to listen) is one line, not a stack trace. */
function cannotListen(error) {
  const reason = error.code === 'EADDRINUSE' ? `port ${port} is already in use (set PORT to use another one)` : error.message;
  console.error(`cannot listen on http://127.0.0.1:${port}/webhooks: ${reason}`);
  process.exit(1);
}
