/**
 * `npm run build && node bench/telemetry-cost.mjs [--baseline DIR]`: instructions per delivery on the receive
 * path itself (`respond()` with bodies in memory, no sockets), counted by callgrind, with `telemetry` unset
 * and with `openTelemetry()` but no SDK registered (the API's no-op). Node runs with `--predictable`, so
 * that V8's background threads and GC timing do not move the count: runs of one build agree within
 * 0.05 %, where the socket benchmark (bench/instructions.mjs) moves by several per cent from run to run.
 * `--baseline DIR`: also measures the build in DIR (another checkout with `npm run build` done), to compare a
 * change with what it changed.
 *
 * Each variant warms up 20 000 deliveries, zeroes the counters, counts 20 000 more (every body distinct,
 * handlers run after each answer), then dumps. Needs valgrind; each run takes a few minutes.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const WARMUP = 20_000;
const COUNT = 20_000;
const here = fileURLToPath(import.meta.url);
const repo = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();

/** The measured process: a receiver answering deliveries handed to `respond()`. */
async function child(root, variant) {
  const { createWebhooks } = await import(join(root, 'dist/src/index.js'));
  const { CREDENTIALS, AUTHORIZATION, chatBody } = await import(join(repo, 'bench/lib/payloads.mjs'));
  const extra = variant === 'otel' ? { telemetry: (await import(join(root, 'dist/src/telemetry/otel/index.js'))).openTelemetry() } : {};
  const webhooks = createWebhooks({ auth: CREDENTIALS, logger: { warn() {}, error() {} }, ...extra });
  let handled = 0;
  let ok = 0;
  webhooks.on('message_sent', () => void handled++);
  const send = (response) => void (response.status === 200 && ok++);
  let seq = 1_000_000_000;
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const body = chatBody(seq++);
      const headers = { 'content-type': 'application/json', 'content-length': String(body.length), authorization: AUTHORIZATION };
      webhooks.respond({ method: 'POST', headers, body }, send);
      // Handlers run after each answer, on the next tick: let them.
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setImmediate(resolve));
  };
  // callgrind_control is answered while the process waits in its event loop, not while it blocks.
  const control = (what) => new Promise((resolve) => spawn('callgrind_control', [what, String(process.pid)], { stdio: 'ignore' }).once('exit', resolve));
  await run(WARMUP);
  await control('--zero');
  await run(COUNT);
  await control('--dump');
  if (handled !== WARMUP + COUNT || ok !== WARMUP + COUNT) throw new Error(`handled ${handled}, answered 200 ${ok}`);
}

/** Instructions per delivery of one build and variant. */
function measure(root, variant) {
  const out = mkdtempSync(join(tmpdir(), 'telemetry-cost-'));
  try {
    const args = ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(out, 'cg.%p')}`];
    execFileSync('valgrind', [...args, process.execPath, '--predictable', here, '--child', root, variant], { stdio: 'ignore' });
    const dump = readdirSync(out).find((file) => /\.\d+\.\d+$/.test(file));
    const total = Number(/^summary: (\d+)/m.exec(readFileSync(join(out, dump ?? ''), 'utf8'))?.[1]);
    if (!(total > 0)) throw new Error(`no callgrind summary for ${root} ${variant}`);
    return total / COUNT;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function main() {
  const { values } = parseArgs({ options: { baseline: { type: 'string' } } });
  const runs = [
    ...(values.baseline ? [[`baseline (${values.baseline})`, values.baseline, 'off']] : []),
    ['telemetry unset', repo, 'off'],
    ['openTelemetry(), no SDK', repo, 'otel'],
  ];
  const counts = [];
  for (const [name, root, variant] of runs) {
    const count = measure(root, variant);
    counts.push(count);
    console.log(`${name}: ${Math.round(count).toLocaleString('en-US')} instructions/delivery`);
  }
  const unset = counts[runs.length - 2];
  if (values.baseline) console.log(`unset vs baseline: ${(((unset - counts[0]) / counts[0]) * 100).toFixed(2)} %`);
  console.log(`no-SDK telemetry vs unset: +${Math.round(counts[runs.length - 1] - unset).toLocaleString('en-US')} (${(((counts[runs.length - 1] - unset) / unset) * 100).toFixed(1)} %)`);
}
