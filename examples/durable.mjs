// Durable delivery: a receiver that only stores each delivery in an inbox before answering 200, and a worker
// that handles what the inbox holds, with retries. In production they often run as separate processes (or
// machines, with Redis); here both are in one file. On SIGTERM the process stops taking requests, lets running
// handlers finish, and exits by itself: each of them closes the inbox it was given once nobody else uses it.
// Run: npm run build && node examples/durable.mjs
//   INBOX=sqlite (default; the file under DATA_DIR, default .data) | redis (REDIS_URL) | postgres (DATABASE_URL) | memory
//   PORT (3000), WEBHOOK_USERNAME / WEBHOOK_PASSWORD (demo / demo-password), WORK_MS: how long each handler
//   pretends to work (0), to watch a shutdown wait for it.
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWebhooks, createWorker, memoryInbox } from 'chat-webhooks';
import { nodeMiddleware } from 'chat-webhooks/node';

const port = Number(process.env.PORT ?? 3000);
const auth = { username: process.env.WEBHOOK_USERNAME ?? 'demo', password: process.env.WEBHOOK_PASSWORD ?? 'demo-password' };
const workMs = Number(process.env.WORK_MS ?? 0);
const kind = process.env.INBOX ?? 'sqlite';

/** A new inbox each call: the receiver and the worker each get their own, as separate processes would. */
async function inboxMaker() {
  if (kind === 'postgres') {
    const { postgresInbox } = await import('chat-webhooks/postgres');
    return () => postgresInbox({ connectionString: process.env.DATABASE_URL ?? 'postgres://localhost/postgres' });
  }
  if (kind === 'redis') {
    const { redisInbox } = await import('chat-webhooks/redis');
    return () => redisInbox({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
  }
  if (kind === 'sqlite') {
    const { sqliteInbox } = await import('chat-webhooks/sqlite');
    const path = resolve(process.env.DATA_DIR ?? '.data', 'durable-inbox.sqlite');
    return () => sqliteInbox({ path });
  }
  // The memory inbox lives in one object: the receiver and the worker share it.
  const shared = memoryInbox();
  return () => shared;
}
const inbox = await inboxMaker();

const receiver = createWebhooks({ auth, inbox: inbox(), consume: false });
receiver.onError((error) => console.log(`refused     ${error.status ?? ''} ${error.code}: ${error.message}`));

const worker = createWorker({ inbox: inbox(), concurrency: 16 })
  .onAny(async (event, { key, attempt }) => {
    console.log(`handling    ${event.trigger} (key ${key}, attempt ${attempt})`);
    await sleep(workMs);
    console.log(`handled     ${event.trigger} (key ${key})`);
  })
  .onError((error) => console.log(`failed      ${error.code} (attempt ${error.attempt}, retry: ${error.willRetry})`))
  .start();

const server = createServer(nodeMiddleware(receiver, { path: '/webhooks' }));
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks (${kind} inbox)`));

process.once('SIGTERM', async () => {
  server.close(); // no new connections
  await receiver.close(); // late requests get 503 (the platform retries); then its inbox closes
  await worker.close(); // running handlers finish; then its inbox closes, and nothing keeps the process alive
  console.log('stopped');
});
