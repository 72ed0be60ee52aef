/**
 * The Lambda handlers of bench/lambda.mjs, counted per invocation in process by callgrind.
 *
 *   node bench/lambda-count.mjs [--warmup 20000] [--count 20000] [--runs 1] [--kinds bare,core,ours] [--keep DIR]
 *
 * Measures each kind under `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes` with node's
 * `--predictable` (no background compilation or collection threads, so that runs of one build agree closely)
 * and prints its simulated cycles (issue 27's: instructions + 10 × L1 misses + 100 × LL misses + 15 ×
 * mispredicted branches), instructions and JS heap allocated per invocation, then ours ÷ bare. Kinds:
 * - `bare`: an async handler that JSON.parses the body and returns 200;
 * - `core`: the receiver's own work with no adapter: an async handler that hands the event's method, headers
 *   and body to `webhooks.respond()` and returns its answer (what ours costs beyond it is the adapter's);
 * - `ours`: `lambdaHandler(webhooks)`.
 * The warm-up is long because V8 keeps optimising ours for its first ~15 000 invocations (the dedupe window
 * fills at 10 000 keys and starts evicting), and compilation within the counted batch would be counted.
 * With `--runs N` each kind is measured N times, in turns, and the median kept. `--keep DIR` leaves each run's
 * callgrind dump in a directory under DIR, for `callgrind_annotate`.
 *
 * As a child (`node bench/lambda-count.mjs <bare|core|ours> <warmup> <count>`, how bench/instructions.mjs and
 * the mode above run it): the handlers and events are those of bench/lambda.mjs (API Gateway HTTP API 2.0
 * events with the ~1 KB message_sent body, Basic auth, `Application/json`; one invocation awaited at a time, as
 * Lambda runs them). After `warmup` invocations this prints `warm` and waits for a line on stdin (the parent
 * zeroes the counters meanwhile), runs `count` more, prints `done` and waits again (the parent dumps). Then it
 * measures the JS heap allocated per invocation over `count` more (no scavenge falls inside them: run with a
 * large young generation and --expose-gc, see the parent) and prints `alloc <bytes> <gcs>`.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { measureLambda } from './lib/callgrind.mjs';
import { apiGatewayV2Event, CREDENTIALS } from './lib/payloads.mjs';

const k = (value) => Math.round(value).toLocaleString('en-US');
const KINDS = ['bare', 'core', 'ours'];
/** Invocations after a full collection, for V8 to optimise again what the collection deoptimised. */
const REWARM = 6000;
if (KINDS.includes(process.argv[2])) await child(...process.argv.slice(2));
else await parent();

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
  if (kind === 'ours') return lambdaHandler(webhooks);
  // The receiver's work alone: the same request, answered by respond() without any translation.
  return async (event) => {
    let answer;
    webhooks.respond({ method: event.requestContext.http.method, headers: event.headers, body: event.body }, (response) => (answer = response));
    return { statusCode: answer.status, headers: answer.headers, body: answer.body };
  };
}

async function child(name, warmupArg, countArg) {
  const warmup = Number(warmupArg);
  const count = Number(countArg);
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
  // A full collection once the batch is built, else one may fall inside the counted batch for one handler and
  // not for another (its marking alone cost some 9 k cycles per invocation over 20 000). It throws away
  // optimised code that holds objects weakly, so V8 optimises again before the count starts.
  // A young-generation collection last, so that the batch starts with it empty (none then falls inside).
  const settle = async () => {
    globalThis.gc?.();
    await invoke(batch(REWARM));
    globalThis.gc?.({ type: 'minor' });
  };
  await invoke(batch(warmup));
  let events = batch(count);
  await settle();
  console.log('warm');
  await lines.next();
  await invoke(events);
  console.log('done');
  await lines.next();

  events = batch(count);
  // Collected first, so that no collection falls inside the measured batch (counted below, to be sure).
  await settle();
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
}

async function parent() {
  const { values } = parseArgs({
    options: {
      warmup: { type: 'string', default: '20000' },
      count: { type: 'string', default: '20000' },
      runs: { type: 'string', default: '1' },
      kinds: { type: 'string', default: KINDS.join(',') },
      keep: { type: 'string' },
    },
  });
  const kinds = values.kinds.split(',');
  const samples = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let run = 0; run < Number(values.runs); run += 1) {
    for (const kind of kinds) {
      const count = await measureLambda(kind, { warmup: Number(values.warmup), requests: Number(values.count), nodeFlags: ['--predictable'], keep: values.keep && mkdtempSync(join(values.keep, `${kind}-`)) });
      samples[kind].push(count);
      const alloc = count.allocated === undefined ? 'allocation not measured (a collection fell inside)' : `${(count.allocated / 1024).toFixed(2)} KB allocated`;
      console.log(`${kind}: ${k(count.cycles)} cycles, ${k(count.instructions)} instructions, ${alloc} per invocation`);
    }
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const figure = (kind, key) => median(samples[kind].map((count) => count[key]).filter((value) => value !== undefined));
  if (!samples.bare) return;
  for (const kind of kinds.filter((name) => name !== 'bare')) {
    const ratio = (key) => (figure(kind, key) / figure('bare', key)).toFixed(2);
    const heap = figure(kind, 'allocated') === undefined ? '' : `, ${ratio('allocated')}× the JS heap allocated`;
    console.log(`${kind} ÷ bare: ${ratio('cycles')}× the cycles, ${ratio('instructions')}× the instructions${heap}`);
  }
}
