// Load test (a script, not a timed test): 20 000 distinct valid deliveries at 100 concurrent connections on
// loopback against the node:http and Express adapters, each server in its own process. Checks that every 200
// corresponds to exactly one handler call: zero lost, zero duplicated, zero 5xx. Prints the counts and the
// server's peak RSS. Run after `npm run build`:  node scripts/load-test.mjs [--requests N] [--concurrency N]
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const USER = 'load';
const PASSWORD = 'load-test-secret';
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};

if (process.argv[2] === '--serve') await serve(process.argv[3]);
else await main();

async function serve(kind) {
  const { createServer } = await import('node:http');
  const { createWebhooks } = await import('chat-webhooks');
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {} });
  const calls = new Map();
  let errors = 0;
  webhooks.on('message_sent', (event) => {
    const id = event.data.message.id;
    calls.set(id, (calls.get(id) ?? 0) + 1);
  });
  webhooks.onError(() => void errors++);

  let app;
  if (kind === 'express') {
    const { default: express } = await import('express');
    const { expressMiddleware } = await import('chat-webhooks/express');
    app = express();
    app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
  } else {
    const { nodeMiddleware } = await import('chat-webhooks/node');
    app = nodeMiddleware(webhooks, { path: '/webhooks' });
  }
  const server = createServer(app);
  server.keepAliveTimeout = 60_000;
  let peakRss = 0;
  const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));
  const sampler = setInterval(sample, 50);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', async (message) => {
    if (message !== 'report') return;
    await webhooks.close({ timeoutMs: 10_000 });
    sample();
    clearInterval(sampler);
    process.send({ calls: [...calls], errors, peakRss }, () => process.exit(0));
  });
}

async function main() {
  const total = option('requests', 20_000);
  const concurrency = option('concurrency', 100);
  const template = JSON.parse(readFileSync(new URL('../fixtures/message_sent.json', import.meta.url), 'utf8'));
  const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  let failed = false;

  for (const kind of ['node', 'express']) {
    const child = fork(new URL(import.meta.url), ['--serve', kind], { stdio: 'inherit' });
    const { port } = await new Promise((resolve) => child.once('message', resolve));
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const statuses = new Map();
    const accepted = [];
    let next = 0;
    const started = performance.now();

    const send = (id) =>
      new Promise((resolve) => {
        const event = structuredClone(template);
        event.data.message.id = id;
        const body = JSON.stringify(event);
        const req = request(
          {
            agent,
            port,
            host: '127.0.0.1',
            path: '/webhooks',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: auth },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode));
          },
        );
        req.on('error', () => resolve('network error'));
        req.end(body);
      });

    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          const id = `load-${next++}`;
          const status = await send(id);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 200) accepted.push(id);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    agent.destroy();
    child.send('report');
    const report = await new Promise((resolve) => child.once('message', resolve));
    await new Promise((resolve) => child.once('exit', resolve));

    const calls = new Map(report.calls);
    const lost = accepted.filter((id) => !calls.has(id)).length;
    const duplicated = [...calls.values()].filter((count) => count > 1).length;
    const acceptedIds = new Set(accepted);
    const unexpected = [...calls.keys()].filter((id) => !acceptedIds.has(id)).length;
    const serverErrors = [...statuses].filter(([status]) => typeof status === 'number' && status >= 500).reduce((sum, [, n]) => sum + n, 0);
    const ok = statuses.get(200) ?? 0;
    const pass = ok === total && lost === 0 && duplicated === 0 && unexpected === 0 && serverErrors === 0;
    failed ||= !pass;
    console.log(
      `${kind.padEnd(8)} ${total} requests, ${concurrency} connections, ${seconds.toFixed(1)} s (${Math.round(total / seconds)} req/s): ` +
        `200=${ok} handler calls=${[...calls.values()].reduce((a, b) => a + b, 0)} lost=${lost} duplicated=${duplicated} ` +
        `unexpected=${unexpected} 5xx=${serverErrors} other=${JSON.stringify(Object.fromEntries([...statuses].filter(([s]) => s !== 200)))} ` +
        `onError=${report.errors} peak RSS=${(report.peakRss / 1024 / 1024).toFixed(1)} MiB  ${pass ? 'PASS' : 'FAIL'}`,
    );
  }
  process.exit(failed ? 1 : 0);
}
