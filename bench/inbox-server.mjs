/**
 * One receiver per process for bench/inboxes.mjs: `node bench/inbox-server.mjs <memory|sqlite|redis|postgres> <consume|receive>`, with
 * INBOX_DB (SQLite file, one per process), REDIS_URL or POSTGRES_URL in the environment. node:http + nodeMiddleware + createWebhooks with
 * that inbox and an in-process worker (the one-process deployment), a handler that counts.
 * Says `{ type: 'ready', port }`; answers `{ type: 'stats' }` with the handler count and the inbox's stats
 * (so the parent can check that every acknowledged event was stored), `{ type: 'exit' }` closes.
 */
import http from 'node:http';
import { CREDENTIALS, PATH } from './lib/payloads.mjs';

const [kind, mode = 'consume'] = process.argv.slice(2);
const { createWebhooks, memoryInbox } = await import('chat-webhooks');
const { nodeMiddleware } = await import('chat-webhooks/node');

async function openInbox() {
  if (kind === 'memory') return memoryInbox({ maxKeys: 100_000 });
  if (kind === 'sqlite') return (await import('chat-webhooks/sqlite')).sqliteInbox({ path: process.env.INBOX_DB });
  if (kind === 'redis') return (await import('chat-webhooks/redis')).redisInbox({ url: process.env.REDIS_URL, prefix: `bench-${process.pid}` });
  if (kind === 'postgres') return (await import('chat-webhooks/postgres')).postgresInbox({ connectionString: process.env.POSTGRES_URL, schema: `bench_${process.pid}` });
  throw new Error(`unknown inbox ${kind}`);
}

const inbox = await openInbox();
let handled = 0;
const errorCodes = {};
// 'consume': one process receives and handles (in-process worker); 'receive': consume: false, as receivers
// behind which workers run elsewhere.
const consume = mode === 'consume';
// Under valgrind (bench/instructions.mjs) a commit takes 50–100 times longer: the commit timeout is raised there,
// as a timeout changes no work done.
const commitTimeout = process.env.BENCH_COMMIT_TIMEOUT_MS ? { commitTimeoutMs: Number(process.env.BENCH_COMMIT_TIMEOUT_MS) } : {};
const webhooks = createWebhooks({ auth: CREDENTIALS, inbox, consume, logger: { warn() {}, error() {} }, worker: { concurrency: 16 }, ...commitTimeout });
webhooks.on('message_sent', () => void (handled += 1));
webhooks.onError((error) => void (errorCodes[error.code] = (errorCodes[error.code] ?? 0) + 1));

const middleware = nodeMiddleware(webhooks, { path: PATH });
const server = http.createServer(middleware);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  if (process.send) process.send({ type: 'ready', port: server.address().port });
  // Without a parent to tell (bench/instructions.mjs runs it under valgrind), the address goes to stdout.
  else console.log(`${kind} inbox receiver listening on http://127.0.0.1:${server.address().port}${PATH}`);
});

process.on('message', async (message) => {
  if (message?.type === 'cpu') {
    process.send({ id: message.id, cpu: process.cpuUsage(), handled });
  } else if (message?.type === 'between-runs') {
    // A memory inbox that only receives keeps every event in the heap, and a heap that grows with every ack
    // made each round's baseline slower than the last (77 to 112 µs of CPU per ack over three rounds): the
    // events of the run that ended are dropped, outside the timed window.
    if (kind === 'memory' && !consume) await inbox.purge({ state: 'pending' });
    process.send({ id: message.id });
  } else if (message?.type === 'stats') {
    process.send({ id: message.id, handled, errorCodes, inbox: await inbox.stats(), rss: process.memoryUsage().rss });
  } else if (message?.type === 'exit') {
    server.close();
    await webhooks.close({ timeoutMs: 2000 });
    await inbox.close();
    process.exit(0);
  }
});
if (process.send) process.on('disconnect', () => process.exit(0));
