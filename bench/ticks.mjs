/**
 * Counts `process.nextTick` calls per request, bare Fastify route against `fastifyWebhooks`, over one
 * keep-alive socket, one request at a time (issue 10: "the Fastify adapter's extra process.nextTick work").
 *   npm run build && node bench/ticks.mjs
 * Prints the calls per request by callback name for each.
 */
import { CREDENTIALS, PATH, rawRequest } from './lib/payloads.mjs';
import net from 'node:net';
const { default: Fastify } = await import('fastify');
const { createWebhooks } = await import('chat-webhooks');
const { fastifyWebhooks } = await import('chat-webhooks/fastify');
async function bare() { const app = Fastify(); app.post(PATH, async () => 'OK'); return app; }
async function ours() { const app = Fastify(); const w = createWebhooks({ auth: CREDENTIALS, logger: { warn() {}, error() {} } }); w.on('message_sent', () => {}); await app.register(fastifyWebhooks, { webhooks: w, path: PATH }); return app; }
const origTick = process.nextTick; let ticks = 0; const where = new Map();
process.nextTick = function (fn, ...a) { ticks++; const k = (fn.name || 'anon') ; where.set(k, (where.get(k) || 0) + 1); return origTick.call(process, fn, ...a); };
for (const [name, make] of [['bare', bare], ['ours', ours]]) {
  const app = await make(); await app.listen({ port: 0, host: '127.0.0.1' }); const port = app.server.address().port;
  const sock = net.connect(port, '127.0.0.1'); await new Promise((r) => sock.once('connect', r));
  const N = 2000; let seq = 1;
  const one = () => new Promise((r) => { sock.once('data', () => r()); sock.write(rawRequest('chat', seq++, port)); });
  for (let i = 0; i < 200; i++) await one();
  ticks = 0; where.clear();
  for (let i = 0; i < N; i++) await one();
  console.log(name, 'nextTick per request', (ticks / N).toFixed(2), [...where].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}:${(v / N).toFixed(2)}`).join(' '));
  sock.destroy(); await app.close();
}
