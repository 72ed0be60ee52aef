/**
 * The longest stall of the event loop while a sqliteInbox takes steady puts: what a receiver's other requests
 * wait for when the inbox holds the loop (a checkpoint that blocks the writer, for one).
 *   node bench/sqlite-stalls.mjs [seconds=20] [pauseMs=10] [bodyBytes=900]      (after `npm run build`)
 * Two loops each put 64 events, wait for them, pause `pauseMs`, and again: about 10 000 puts/s here at the
 * default pause, as the inbox benchmark's receivers take them. Prints puts/s, CPU per put and the event loop's
 * delay (p99 and max, monitorEventLoopDelay at 1 ms resolution), the WAL's size in frames every 250 ms, and its
 * largest size against the bodies written.
 * `pauseMs` 0 puts with no pause at all, where PASSIVE checkpoints never end between two commits and only the
 * RESTART past 32 MB bounds the WAL: `node bench/sqlite-stalls.mjs 20 0 4000` is the figure a unit test used
 * to hold (WAL < 0.6× the bodies), which depended on the machine's pace (test/inbox/sqlite-disk.test.ts now
 * checks that the WAL is started over, by its header's checkpoint sequence).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const { sqliteInbox } = await import('chat-webhooks/sqlite');
const [seconds = 20, pauseMs = 10, bodyBytes = 900] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'sqlite-stalls-'));
const path = join(dir, 'inbox.db');
const inbox = sqliteInbox({ path });
const rawBody = JSON.stringify({ trigger: 'message_sent', data: { message: { id: '0', text: 'x'.repeat(bodyBytes) } } });
let serial = 0;
let done = 0;

async function putMany(count) {
  const puts = [];
  for (let i = 0; i < count; i++) {
    puts.push(inbox.put({ key: `wh:message_sent:${serial++}`, trigger: 'message_sent', event: {}, rawBody, receivedAt: Date.now() }));
  }
  await Promise.all(puts);
  done += count;
  largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
}
let largestWal = 0;

const walFrames = [];
const sampler = setInterval(() => walFrames.push(Math.round(statSync(`${path}-wal`).size / (4096 + 24))), 250);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const cpu = process.cpuUsage();
const end = Date.now() + seconds * 1000;
const steady = async () => {
  while (Date.now() < end) {
    await putMany(64);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
};
await Promise.all([steady(), steady()]);
delay.disable();
clearInterval(sampler);
const { user, system } = process.cpuUsage(cpu);
console.log(`WAL frames every 250 ms: ${walFrames.join(' ')}`);
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0);
console.log(`largest WAL ${mb(largestWal)} MB, bodies written ${mb(done * rawBody.length)} MB (${(largestWal / (done * rawBody.length)).toFixed(2)}×)`);
console.log(
  `${Math.round(done / seconds)} puts/s, CPU ${((user + system) / done).toFixed(1)} µs per put, event loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`,
);
await inbox.close();
rmSync(dir, { recursive: true, force: true });
