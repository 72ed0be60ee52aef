/**
 * Lambda: in-process invocations per second, `node bench/lambda.mjs` (run.mjs pins it to one core).
 *
 * Both handlers get the same API Gateway HTTP API (payload 2.0) events carrying the message_sent body with a
 * Basic auth header, one invocation at a time, as Lambda runs them (an instance never gets a second event
 * before it answered the first). The bare handler JSON.parses the body and answers 200; ours is
 * `lambdaHandler(webhooks)`, which also waits for the handlers to finish before it returns (Lambda freezes
 * the function after the answer). Events are built before timing; bodies are distinct (dedupe is on).
 *
 * Rounds alternate bare/ours after a warm-up. Prints one JSON line: { rounds: { bare: [...], ours: [...] }, checks }.
 * Options: --rounds N --duration S --warmup S
 */
import { parseArgs } from 'node:util';
import { apiGatewayV2Event, CREDENTIALS } from './lib/payloads.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '3' }, warmup: { type: 'string', default: '1' } },
});
const rounds = Number(values.rounds);
const durationMs = Number(values.duration) * 1000;
const warmupMs = Number(values.warmup) * 1000;

const { createWebhooks } = await import('chat-webhooks');
const { lambdaHandler } = await import('chat-webhooks/lambda');

let oursCalls = 0;
let oursErrors = 0;
const webhooks = createWebhooks({ auth: CREDENTIALS, logger: { warn() {}, error() {} } });
webhooks.on('message_sent', () => {
  oursCalls++;
});
webhooks.onError(() => {
  oursErrors++;
});

let bareCalls = 0;
const handlers = {
  bare: async (event) => {
    JSON.parse(event.body);
    bareCalls++;
    return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'OK' };
  },
  ours: lambdaHandler(webhooks),
};

// 20 011 distinct events (more than the dedupe window's 10 000 keys), reused in turn.
const POOL = 20_011;
const events = Array.from({ length: POOL }, (_, i) => apiGatewayV2Event(5_000_000 + i));
const context = { functionName: 'bench', awsRequestId: 'bench', getRemainingTimeInMillis: () => 29_000 };

// One cursor per handler: events interleaved between the two would otherwise reach ours out of turn and
// repeat a body its dedupe window still holds.
const cursors = { bare: 0, ours: 0 };
const statuses = { bare: {}, ours: {} };

async function measure(name, ms) {
  const handler = handlers[name];
  let cursor = cursors[name];
  let count = 0;
  const start = performance.now();
  const end = start + ms;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 64; i++) {
      const result = await handler(events[cursor], context);
      cursor = cursor + 1 === POOL ? 0 : cursor + 1;
      statuses[name][result.statusCode] = (statuses[name][result.statusCode] ?? 0) + 1;
    }
    count += 64;
    now = performance.now();
  }
  cursors[name] = cursor;
  return { invocations: count, ms: now - start, perSecond: (count * 1000) / (now - start) };
}

await measure('bare', warmupMs);
await measure('ours', warmupMs);
const results = { bare: [], ours: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ['bare', 'ours'] : ['ours', 'bare'];
  for (const name of order) results[name].push(await measure(name, durationMs));
}
// Wait for anything still settling before counting.
await new Promise((resolve) => setTimeout(resolve, 100));
const invocations = { bare: 0, ours: 0 };
for (const name of ['bare', 'ours']) for (const [, n] of Object.entries(statuses[name])) invocations[name] += n;
process.stdout.write(
  `${JSON.stringify({
    rounds: results,
    checks: {
      bare: { invocations: invocations.bare, statuses: statuses.bare, handlerCalls: bareCalls },
      ours: { invocations: invocations.ours, statuses: statuses.ours, handlerCalls: oursCalls, errors: oursErrors },
    },
  })}\n`,
);
