/**
 * `put` cost of sqliteInbox with an empty window and with 1 million remembered keys, and the process's memory
 * while keys accumulate. Run by bench/inboxes.mjs as `node --expose-gc bench/inbox-putcost.mjs <dir>`; prints
 * one JSON line. Puts go in groups of 64 per event-loop turn, as 64 connections would send them.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

const { sqliteInbox } = await import('chat-webhooks/sqlite');
const dir = process.argv[2];
const path = join(dir, 'putcost.sqlite');
const GROUP = 64;
const body = JSON.stringify({ trigger: 'message_sent', webhook: 'wh', data: { message: { id: '0', data: { text: 'x'.repeat(600) } } } });
const event = JSON.parse(body);
let serial = 0;

/** Microseconds per put over `count` new keys. */
async function measure(inbox, count) {
  const started = process.hrtime.bigint();
  for (let done = 0; done < count; done += GROUP) {
    const puts = [];
    for (let i = 0; i < GROUP; i++) {
      const key = `wh:message_sent:put-${serial++}`;
      puts.push(inbox.put({ key, trigger: 'message_sent', event, rawBody: body, receivedAt: Date.now() }));
    }
    const results = await Promise.all(puts);
    if (results.some((result) => result !== 'stored')) throw new Error('a new key was not stored');
  }
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

/** Remembered (done) keys written straight into the table, as a day of traffic would leave them. */
function fill(count) {
  const db = new Database(path);
  const insert = db.prepare('INSERT INTO inbox (key, trigger, state, due, received_at, attempts) VALUES (?, ?, 2, ?, ?, 1)');
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`wh:message_sent:fill-${i}`, 'message_sent', now + 86_400_000, now);
  })();
  db.close();
}

function memory() {
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMb: +(rss / 2 ** 20).toFixed(1), heapMb: +(heapUsed / 2 ** 20).toFixed(1) };
}

const inbox = sqliteInbox({ path });
await measure(inbox, 5000); // warm-up
const empty = await measure(inbox, 20_000);
await inbox.close();

const fillStarted = Date.now();
fill(1_000_000);
const fillMs = Date.now() - fillStarted;

const full = sqliteInbox({ path });
await measure(full, 5000);
const withMillion = await measure(full, 20_000);
const samples = [memory()];
for (let round = 0; round < 5; round++) {
  await measure(full, 20_000);
  samples.push(memory());
}
await full.close();
console.log(JSON.stringify({ emptyUs: empty, millionUs: withMillion, ratio: withMillion / empty, fillMs, samples }));
