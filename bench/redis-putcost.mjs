/**
 * `npm run build && node bench/redis-putcost.mjs [--baseline DIR] [--profile]`: the receiver's cost of a Redis
 * inbox `put`, in process (no HTTP), counted by callgrind as bench/telemetry-cost.mjs counts the receive path:
 * simulated cycles and instructions per put of the process (all its threads), redis-server not counted.
 * Puts arrive as 50 connections send them: groups of 25 in one turn, each group awaited, two groups in flight.
 * `--baseline DIR`: also measures the build in DIR (another checkout with `npm run build` done).
 * `--profile`: no valgrind; writes a `node --cpu-prof` profile (warm-up included) to $TMPDIR/redis-putcost-profile/.
 *
 * Runs under `node --predictable`, so V8's background threads and collection timing move the count little.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { callgrindArgs, cycles, readDump } from './lib/callgrind.mjs';
import { startRedis } from './lib/redis-server.mjs';

const WARMUP = 6_000;
const COUNT = 4_000;
const GROUP = 25;
const PROFILE_DIR = join(tmpdir(), 'redis-putcost-profile');
const here = fileURLToPath(import.meta.url);
const repo = fileURLToPath(new URL('..', import.meta.url));

const values = process.argv[2] === '--child' ? {} : parseArgs({ options: { baseline: { type: 'string' }, profile: { type: 'boolean', default: false } } }).values;
if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();

/** The measured process: puts of distinct ~1 KB bodies into a redisInbox, two groups of GROUP in flight. */
async function child(root, url) {
  const { redisInbox } = await import(join(root, 'dist/src/stores/redis/index.js'));
  const { chatBody } = await import(join(repo, 'bench/lib/payloads.mjs'));
  const inbox = redisInbox({ url, prefix: `putcost-${process.pid}` });
  let seq = 1_000_000_000;
  const group = async () => {
    const puts = [];
    for (let i = 0; i < GROUP; i++) {
      const id = seq++;
      const rawBody = chatBody(id);
      puts.push(inbox.put({ key: `wh_1:message_sent:${id}`, trigger: 'message_sent', rawBody, receivedAt: Date.now() }));
    }
    const results = await Promise.all(puts);
    if (results.some((result) => result !== 'stored')) throw new Error('a new key was not stored');
  };
  const run = async (count) => {
    let left = count / GROUP;
    const lane = async () => {
      while (left-- > 0) await group();
    };
    await Promise.all([lane(), lane()]);
  };
  await run(WARMUP);
  process.stdout.write('warm\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  await run(COUNT);
  process.stdout.write('done\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  await inbox.close();
  process.exit(0);
}

/** Waits for a line on the child's stdout. */
function line(childProcess, text) {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk) => {
      out += chunk;
      if (out.includes(text)) {
        childProcess.stdout.off('data', onData);
        resolve();
      }
    };
    childProcess.stdout.on('data', onData);
    childProcess.once('exit', (code) => reject(new Error(`child exited (${code}): ${out}`)));
  });
}

async function measure(root, profile) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-putcost-'));
  const { url, child: redis } = await startRedis(dir);
  try {
    const node = [process.execPath, '--predictable', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []), here, '--child', root, url];
    const command = profile ? node : ['valgrind', ...callgrindArgs(true), `--callgrind-out-file=${join(dir, 'callgrind.%p')}`, ...node];
    const measured = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    await line(measured, 'warm');
    if (!profile) execFileSync('callgrind_control', ['--zero', String(measured.pid)], { stdio: 'ignore' });
    measured.stdin.write('go\n');
    await line(measured, 'done');
    if (!profile) execFileSync('callgrind_control', ['--dump', String(measured.pid)], { stdio: 'ignore' });
    measured.stdin.write('exit\n');
    await new Promise((resolve) => measured.once('exit', resolve));
    if (profile) return undefined;
    const count = readDump(dir, root);
    return { instructions: Math.round(count.Ir / COUNT), cycles: Math.round(cycles(count) / COUNT) };
  } finally {
    redis.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (values.profile) mkdirSync(PROFILE_DIR, { recursive: true });
  for (const [label, root] of [['this build', repo], ...(values.baseline ? [['baseline', values.baseline]] : [])]) {
    const count = await measure(root, values.profile);
    console.log(values.profile ? `${label}: profile written to ${PROFILE_DIR}` : `${label}: ${count.cycles} cycles, ${count.instructions} instructions per put`);
  }
}
