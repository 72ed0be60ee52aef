// One process of the effects crash run (test/crash/effects-run.mjs), from the built package: a receiver
// (node:http + createWebhooks, storing only) or a worker whose handler inserts one row per run into the table
// `effects` (no unique constraint: a second run's row stays) and then throws on some first attempts.
//   ROLE=receiver|worker POSTGRES_URL=<url> PORT=<n> MODE=transaction|own CONCURRENCY=<n> LEASE_MS=<n>
//   FAIL_PERCENT=<n> (of first attempts, chosen by id)  HANG_ID=<id> STARTS=<file> (that id's handler notes
//   "<id> <attempt> <pid> <ms>" in STARTS, then hangs on its first attempt: the run kills it there)
// Prints "ready" on stdout once it takes requests or events.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import pg from 'pg';

const env = process.env;
const { createWebhooks, createWorker } = await import('../../dist/src/index.js');
const { nodeMiddleware } = await import('../../dist/adapters/node/index.js');
const { postgresInbox } = await import('../../dist/src/stores/postgres/index.js');
const inbox = postgresInbox({ connectionString: env.POSTGRES_URL, pollMs: Number(env.POLL_MS ?? 2000) });
const logger = { error: () => undefined };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const failPercent = Number(env.FAIL_PERCENT ?? 3);
/** The same ids throw in every run: spread over the ids by a multiplicative hash. */
const throwsFirst = (id) => (id * 2654435761) % 100 < failPercent;

if (env.ROLE === 'worker') {
  const transaction = env.MODE !== 'own';
  // Without `transaction`, the handler writes through a pool of its own, as an application does today.
  const own = transaction ? undefined : new pg.Pool({ connectionString: env.POSTGRES_URL, max: Number(env.CONCURRENCY ?? 8) });
  own?.on('error', () => undefined);
  const worker = createWorker({
    inbox,
    transaction,
    concurrency: Number(env.CONCURRENCY ?? 8),
    leaseMs: Number(env.LEASE_MS ?? 30_000),
    retry: { attempts: 10, minDelayMs: 10, maxDelayMs: 200 },
    logger,
  });
  worker.on('message_sent', async (event, context) => {
    const id = Number(event.data.message.id);
    if (String(id) === env.HANG_ID) {
      appendFileSync(env.STARTS, `${id} ${context.attempt} ${process.pid} ${Date.now()}\n`);
      if (context.attempt === 1) await sleep(600_000);
    }
    const db = context.transaction ?? own;
    await db.query('INSERT INTO effects (id, attempt) VALUES ($1, $2)', [id, context.attempt]);
    // Some work after the write: a kill lands mid-handler, between the effect and the completion.
    await sleep(1 + Math.floor(Math.random() * 10));
    if (context.attempt === 1 && throwsFirst(id)) throw new Error(`throws after inserting (${id})`);
  });
  worker.start();
  console.log('ready');
} else {
  const webhooks = createWebhooks({ auth: false, inbox, consume: false, logger });
  const server = createServer(nodeMiddleware(webhooks));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(env.PORT), '127.0.0.1', () => console.log('ready'));
}
