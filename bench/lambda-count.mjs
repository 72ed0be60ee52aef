/**
 * One Lambda handler, in process, for bench/instructions.mjs: `node bench/lambda-count.mjs <bare|ours> <warmup> <count>`.
 *
 * The handlers and events are those of bench/lambda.mjs (API Gateway HTTP API 2.0 events with the ~1 KB
 * message_sent body, Basic auth, `Application/json`; one invocation awaited at a time, as Lambda runs them).
 * The parent counts with callgrind: after `warmup` invocations this prints `warm` and waits for a line on stdin
 * (the parent zeroes the counters meanwhile), runs `count` more, prints `done` and waits again (the parent
 * dumps). Then it measures the JS heap allocated per invocation over `count` more (no scavenge falls inside
 * them: run with a large young generation and --expose-gc, see the parent) and prints `alloc <bytes> <gcs>`.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { apiGatewayV2Event, CREDENTIALS } from './lib/payloads.mjs';

const [name, warmupArg, countArg] = process.argv.slice(2);
const warmup = Number(warmupArg);
const count = Number(countArg);

async function handlerFor(kind) {
  if (kind === 'bare') {
    return async (event) => {
      JSON.parse(event.body);
      return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'OK' };
    };
  }
  const { createWebhooks } = await import('chat-webhooks');
  const { lambdaHandler } = await import('chat-webhooks/lambda');
  const webhooks = createWebhooks({ auth: CREDENTIALS, logger: { warn() {}, error() {} } });
  webhooks.on('message_sent', () => {});
  webhooks.onError((error) => {
    throw error;
  });
  return lambdaHandler(webhooks);
}

const handler = await handlerFor(name);
const context = { functionName: 'bench', awsRequestId: 'bench', getRemainingTimeInMillis: () => 29_000 };
// Events are built outside the counted batches; each batch gets distinct bodies (dedupe is on).
let seq = 7_000_000;
const batch = (size) => Array.from({ length: size }, () => apiGatewayV2Event(seq++));

async function invoke(events) {
  for (const event of events) {
    const result = await handler(event, context);
    if (result.statusCode !== 200) throw new Error(`${name} answered ${result.statusCode}`);
  }
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await invoke(batch(warmup));
let events = batch(count);
console.log('warm');
await lines.next();
await invoke(events);
console.log('done');
await lines.next();

events = batch(count);
// Collected first, so that no collection falls inside the measured batch (counted below, to be sure).
globalThis.gc?.();
await new Promise((resolve) => setTimeout(resolve, 10));
let gcs = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });
const before = process.memoryUsage().heapUsed;
await invoke(events);
const allocated = process.memoryUsage().heapUsed - before;
await new Promise((resolve) => setTimeout(resolve, 10));
console.log(`alloc ${allocated / count} ${gcs}`);
process.exit(0);
