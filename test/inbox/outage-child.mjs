// The process of test/inbox/outage.test.ts (and bench figures): a receiver that only stores (`consume: false`)
// on one inbox, from the built package, run with --expose-gc. Talks with its parent by lines:
//   child "ready"            its inbox took a first delivery (stored)
//   parent "outage"          the store is down now (Redis killed, SQLite file locked; memory: the child closes it)
//   child {"outage": ...}    DELIVERIES deliveries of ~100 KB each, all answered; statuses counted, and the heap
//                            retained once their answers were in and a GC ran, against before the outage
//   parent "back"            the store is up again
//   child {"back": ...}      a fresh delivery answered 200 (tried again until it is, for up to 20 s)
//   INBOX=redis|sqlite|memory REDIS_URL DB DELIVERIES (1000) BODY_KB (100)
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const { createWebhooks, memoryInbox } = await import('../../dist/src/index.js');
const env = process.env;
const deliveries = Number(env.DELIVERIES ?? 1000);
const bodyBytes = Number(env.BODY_KB ?? 100) * 1024;

async function openInbox() {
  if (env.INBOX === 'redis') return (await import('../../dist/src/stores/redis/index.js')).redisInbox({ url: env.REDIS_URL, prefix: 'outage' });
  if (env.INBOX === 'sqlite') return (await import('../../dist/src/stores/sqlite/index.js')).sqliteInbox({ path: env.DB });
  return memoryInbox();
}
const inbox = await openInbox();
const webhooks = createWebhooks({ auth: false, inbox, consume: false, logger: {} });

const sample = JSON.parse(readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8'));
let serial = 0;
/** A distinct, valid message_sent of about `bodyBytes` (a fresh id and text each: no two bodies share a string). */
function body() {
  serial += 1;
  sample.data.message.id = `m-${serial}-${Date.now()}`;
  sample.data.message.data.text = `${serial} `.padEnd(bodyBytes, String.fromCharCode(97 + (serial % 26)));
  return JSON.stringify(sample);
}
const deliver = async () => (await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json' }, body: body() })).status;

function heapMb() {
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return (heapUsed + external + arrayBuffers) / 1024 / 1024;
}
const say = (message) => process.stdout.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;

if ((await deliver()) !== 200) throw new Error('the first delivery was not stored');
say('ready');
if ((await next()) !== 'outage') throw new Error('expected "outage"');
if (env.INBOX === 'memory') await inbox.close();
const before = heapMb();
const started = Date.now();
// All at once, as the platform's deliveries arrive during an outage.
const statuses = await Promise.all(Array.from({ length: deliveries }, deliver));
const answeredMs = Date.now() - started;
const counts = {};
for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
// Whatever the store still holds for puts already answered is what an outage costs: a second for late timers.
await new Promise((resolve) => setTimeout(resolve, 1000));
say({ outage: { startedAt: new Date(started).toISOString(), statuses: counts, answeredMs, retainedMb: Math.round((heapMb() - before) * 10) / 10 } });

if (env.INBOX === 'memory') {
  await webhooks.close();
  process.exit(0); // a closed memory inbox does not come back
}
if ((await next()) !== 'back') throw new Error('expected "back"');
const deadline = Date.now() + 20_000;
let status = 0;
while (Date.now() < deadline && (status = await deliver()) !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
say({ back: { status } });
await webhooks.close();
