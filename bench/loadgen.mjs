/**
 * The load generator: a child process (pinned to its own core by run.mjs) that runs autocannon through its
 * programmatic API on the parent's request: `{ type: 'run', id, port, kind, connections, duration | amount }`.
 *
 * Request bytes are built before autocannon starts: each connection gets its own list of distinct, complete
 * requests (see lib/payloads.mjs), installed in autocannon's per-client request iterator by `setupClient`, so
 * no body is built, signed or copied while the clock runs and every server sees the same per-request load
 * generator cost. Sequence numbers never repeat within this process, so no body is sent twice across runs,
 * and within a timed run a connection repeats its list only after ~connections × perClient requests, long
 * after the receiver's dedupe window (10 000 keys) has forgotten it.
 */
import autocannon from 'autocannon';
import { rawRequest, PATH } from './lib/payloads.mjs';

let seq = 1_000_000;

function buildPool(kind, port, connections, perClient) {
  const pool = [];
  for (let c = 0; c < connections; c++) {
    const list = [];
    for (let i = 0; i < perClient; i++) list.push({ method: 'POST', path: PATH, requestBuffer: rawRequest(kind, seq++, port) });
    pool.push(list);
  }
  return pool;
}

async function run({ port, kind, connections = 50, duration, amount, perClient }) {
  const per = perClient ?? (amount ? Math.ceil(amount / connections) + 1 : 400);
  const pool = buildPool(kind, port, connections, per);
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    method: 'POST',
    path: PATH,
    body: '{}',
    connections,
    pipelining: 1,
    ...(amount ? { amount } : { duration }),
    timeout: 10,
    setupClient(client) {
      const list = pool[next++ % pool.length];
      const iterator = client.requestIterator;
      iterator.requests = list;
      iterator.currentRequestIndex = 0;
      iterator.currentRequest = list[0];
    },
  });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    duration: result.duration,
    wallMs: wall,
    rps: result['2xx'] / result.duration,
    total: result.requests.total,
    sent: result.requests.sent,
    ok: result['2xx'],
    non2xx: result.non2xx,
    statusCodes: result.statusCodeStats,
    errors: result.errors,
    timeouts: result.timeouts,
    resets: result.resets,
    latency: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
    loadgenCpu: (cpu.user + cpu.system) / 1000 / wall,
  };
}

process.on('message', async (message) => {
  if (message?.type !== 'run') return;
  try {
    process.send({ type: 'result', id: message.id, result: await run(message) });
  } catch (error) {
    process.send({ type: 'result', id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', pid: process.pid });
