// The demo receiver behind `npm start`: says what it received, what it refused and which deliveries were
// repeats, so that a first try shows whether it worked. Each delivery is stored in a SQLite inbox under
// ./.data/ before it is answered 200, and handled from there (it survives a restart; a repeat, even after a
// restart, is recognized). Not for production: its default credentials are public. Set WEBHOOK_USERNAME,
// WEBHOOK_PASSWORD, PORT and DATA_DIR to change them.
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { createWebhooks } from 'chat-webhooks';
import { nodeMiddleware } from 'chat-webhooks/node';
import { sqliteInbox } from 'chat-webhooks/sqlite';

const port = Number(process.env.PORT ?? 3000);
const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';
const inboxPath = resolve(process.env.DATA_DIR ?? '.data', 'demo-inbox.sqlite');

const logger = {
  warn: (fields, message) => console.warn(`warning     ${message}`, fields),
  error: (fields, message) => console.error(`error       ${message}`, fields),
};

const inbox = sqliteInbox({ path: inboxPath });
const webhooks = createWebhooks({ auth: { username, password }, logger, inbox });
webhooks.onDuplicate((event, { key }) =>
  console.log(`duplicate   ${event.trigger}: a repeat of a delivery already stored (key ${key}); handlers not run again`),
);

webhooks.onAny((event) => console.log(`received    ${event.trigger}: ${summary(event)}`));
webhooks.onError((error) => console.log(`${verdict(error.status)} ${error.status ?? ''} ${error.code}: ${error.message}`));

/** What became of the delivery: refused (4xx/5xx), accepted all the same (an invalid payload gets 200), or failed after the 200. */
function verdict(status) {
  if (status === undefined) return 'failed     ';
  return status < 300 ? 'accepted   ' : 'refused    ';
}

/** One line about an event: the message text where there is one, else the start of its data. */
function summary(event) {
  const message = event.data?.message;
  if (message?.sender) return `${message.sender} → ${message.receiver}: ${message.data?.text ?? `(${message.type})`}`;
  return JSON.stringify(event.data).slice(0, 100);
}

const sample = JSON.stringify({
  trigger: 'message_sent',
  data: {
    message: {
      id: '1', conversationId: 'alice_user_bob', sender: 'alice', receiverType: 'user', receiver: 'bob',
      category: 'message', type: 'text', data: { text: 'Hello from curl' }, sentAt: 1763700000,
    },
  },
});

const server = createServer(nodeMiddleware(webhooks, { path: '/webhooks' }));
server.on('error', (error) => {
  const url = `http://127.0.0.1:${port}/webhooks`;
  const reason = error.code === 'EADDRINUSE' ? `port ${port} is already in use (set PORT to use another one)` : error.message;
  console.error(`chat-webhooks demo: cannot listen on ${url}: ${reason}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/webhooks`;
  console.log(`chat-webhooks demo receiver on ${url} (Ctrl-C to stop)`);
  console.log(`Basic auth: username "${username}", password "${password}"`);
  console.log(`Deliveries are stored in ${inboxPath} before the 200 (a SQLite inbox; delete it to start afresh)`);
  console.log('Send it a delivery from another terminal (twice, to see the repeat recognized):');
  console.log(`  curl -u '${username}:${password}' -H 'Content-Type: application/json' -d '${sample}' ${url}`);
});

// Ctrl-C reaches both npm and this process, and npm passes it on: the second signal must not cut the drain short.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    // Closes the inbox too (nothing else uses it): with nothing left open, the process exits by itself.
    const { abandoned } = await webhooks.close({ timeoutMs: 5000 });
    console.log(`stopped (${abandoned} event(s) abandoned)`);
  });
}
