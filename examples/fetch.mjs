// The fetch handler: (Request, ctx?) => Promise<Response>. Where a runtime speaks fetch, it is one line:
//   Next.js (app/webhooks/route.js)  export const POST = fetchHandler(webhooks);
//   Cloudflare Workers               export default { fetch: (request, env, ctx) => handler(request, ctx) };
//   Bun                              Bun.serve({ port, fetch: (request) => handler(request) });
//   Deno                             Deno.serve({ port }, (request) => handler(request));
//   Hono (c.executionCtx throws outside Workers, so read it guarded)
//     const executionCtxOf = (c) => { try { return c.executionCtx; } catch { return undefined; } };
//     app.post('/webhooks', (c) => handler(c.req.raw, executionCtxOf(c)));
// Node 20 has Request and Response but no fetch server, so this example bridges node:http to the handler.
// Run: npm run build && node examples/fetch.mjs   (WEBHOOK_USERNAME, WEBHOOK_PASSWORD and PORT to change defaults)
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
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
  const response = await handler(request);
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
