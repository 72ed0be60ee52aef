// A Fastify app receiving the chat platform's webhooks at POST /webhooks.
// Run: npm run build && node examples/fastify.mjs   (WEBHOOK_USERNAME, WEBHOOK_PASSWORD and PORT to change defaults)
import Fastify from 'fastify';
import { createWebhooks } from 'chat-webhooks';
import { fastifyWebhooks } from 'chat-webhooks/fastify';

const port = Number(process.env.PORT ?? 3000);
const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';
console.log(`Basic auth: username "${username}", password "${password}"`);

const webhooks = createWebhooks({ auth: { username, password } });
webhooks.onAny((event) => console.log(`${event.trigger}: ${JSON.stringify(event.data).slice(0, 100)}`));
webhooks.onError((error) => console.log(`rejected ${error.code}: ${error.message}`));

const app = Fastify();
await app.register(fastifyWebhooks, { webhooks, path: '/webhooks' });
app.get('/health', async () => 'ok');

await app.listen({ port, host: '127.0.0.1' }).catch(cannotListen);
console.log(`listening on http://127.0.0.1:${app.server.address().port}/webhooks`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.close();
    await webhooks.close(); // nothing is left open: the process exits by itself
  });
}

/** A busy port (or any failure to listen) is one line, not a stack trace. */
function cannotListen(error) {
  const reason = error.code === 'EADDRINUSE' ? `port ${port} is already in use (set PORT to use another one)` : error.message;
  console.error(`cannot listen on http://127.0.0.1:${port}/webhooks: ${reason}`);
  process.exit(1);
}
