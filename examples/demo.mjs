// The demo receiver behind `npm start`: logs every delivery it gets. Not for production: its default
// credentials are public. Set WEBHOOK_USERNAME, WEBHOOK_PASSWORD and PORT to change them.
import { createServer } from 'node:http';
import { createWebhooks } from 'chat-webhooks';
import { nodeMiddleware } from 'chat-webhooks/node';

const port = Number(process.env.PORT ?? 3000);
const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';

const webhooks = createWebhooks({ auth: { username, password } });
webhooks.on('message_sent', (event) => {
  const { sender, receiver, data } = event.data.message;
  console.log(`message_sent   ${sender} → ${receiver}: ${data.text ?? `(${event.data.message.type})`}`);
});
webhooks.onAny((event) => {
  if (event.trigger !== 'message_sent') console.log(`${event.trigger.padEnd(14)} ${JSON.stringify(event.data).slice(0, 100)}`);
});
webhooks.onError((error) => console.log(`rejected       ${error.code}: ${error.message}`));

const server = createServer(nodeMiddleware(webhooks, { path: '/webhooks' }));
server.listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${port}/webhooks`;
  console.log(`chat-webhooks demo receiver on ${url}`);
  console.log(`Basic auth: username "${username}", password "${password}"`);
  console.log('Send it a sample delivery from another terminal:');
  console.log(
    `  curl -u '${username}:${password}' -H 'Content-Type: application/json' --data-binary @fixtures/message_sent.json ${url}`,
  );
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    const { abandoned } = await webhooks.close({ timeoutMs: 5000 });
    console.log(`stopped (${abandoned} event(s) abandoned)`);
    process.exit(0);
  });
}
