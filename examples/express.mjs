// An Express app receiving the chat platform's webhooks at POST /webhooks.
// Run: npm run build && node examples/express.mjs   (WEBHOOK_USERNAME, WEBHOOK_PASSWORD and PORT to change defaults)
import express from 'express';
import { createWebhooks } from 'chat-webhooks';
import { expressMiddleware } from 'chat-webhooks/express';

const port = Number(process.env.PORT ?? 3000);
const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';
console.log(`Basic auth: username "${username}", password "${password}"`);

const webhooks = createWebhooks({ auth: { username, password } });
webhooks.onAny((event) => console.log(`${event.trigger}: ${JSON.stringify(event.data).slice(0, 100)}`));
webhooks.onError((error) => console.log(`rejected ${error.code}: ${error.message}`));

const app = express();
// Works before or after app-wide body parsers; ahead of them it reads the body itself, after checking credentials.
app.use('/webhooks', expressMiddleware(webhooks));
app.get('/health', (_req, res) => res.send('ok'));

const server = app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`));
server.on('error', cannotListen);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close(); // idle keep-alive connections close too; the process exits once the handlers finished
    await webhooks.close();
  });
}

/** A busy port (or any failure to listen) is one line, not a stack trace. */
function cannotListen(error) {
  const reason = error.code === 'EADDRINUSE' ? `port ${port} is already in use (set PORT to use another one)` : error.message;
  console.error(`cannot listen on http://127.0.0.1:${port}/webhooks: ${reason}`);
  process.exit(1);
}
