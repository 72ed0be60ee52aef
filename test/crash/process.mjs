// One process of the crash tests, run from the built package: a receiver (node:http + createWebhooks with an
// inbox, consuming or not) or a worker (createWorker). Every completed handler appends "<id> <attempt>\n" to the file
// HANDLED (O_APPEND writes reach the page cache at once: they survive a SIGKILL of this process).
// Prints "ready" on stdout once it takes requests or events.
//   ROLE=receiver|worker STORE=sqlite|redis|postgres DB=<path> REDIS_URL=<url> POSTGRES_URL=<url> PORT=<n> CONSUME=1|0
//   CONCURRENCY=<n> LEASE_MS=<n> HANDLED=<file>
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

const env = process.env;
const { createWebhooks, createWorker } = await import('../../dist/src/index.js');
const { nodeMiddleware } = await import('../../dist/adapters/node/index.js');
const stores = {
  sqlite: async () => (await import('../../dist/src/stores/sqlite/index.js')).sqliteInbox({ path: env.DB, pollMs: 20 }),
  redis: async () => (await import('../../dist/src/stores/redis/index.js')).redisInbox({ url: env.REDIS_URL, prefix: 'crash', pollMs: 10 }),
  postgres: async () => (await import('../../dist/src/stores/postgres/index.js')).postgresInbox({ connectionString: env.POSTGRES_URL }),
};
const inbox = await stores[env.STORE]();

const worker = {
  concurrency: Number(env.CONCURRENCY ?? 8),
  leaseMs: Number(env.LEASE_MS ?? 1000),
  retry: { attempts: 5, minDelayMs: 10, maxDelayMs: 100 },
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A handler with some work in it, so that events are running when the process is killed. */
async function handle(event, { attempt }) {
  await sleep(1 + Math.floor(Math.random() * 4));
  appendFileSync(env.HANDLED, `${event.data.message.id} ${attempt}\n`);
}

const logger = { error: (fields, message) => console.error(message, fields) };
if (env.ROLE === 'worker') {
  createWorker({ inbox, ...worker, logger }).on('message_sent', handle).start();
  console.log('ready');
} else {
  const webhooks = createWebhooks({ auth: false, inbox, consume: env.CONSUME !== '0', worker, logger });
  webhooks.on('message_sent', handle);
  const server = createServer(nodeMiddleware(webhooks));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(env.PORT), '127.0.0.1', () => console.log('ready'));
}
