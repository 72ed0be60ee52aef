/**
 * CPU profile of one bench/inbox-server.mjs receiver under load, to see where an inbox's time per ack goes:
 *   node bench/profile-inbox.mjs [kind=redis] [mode=receive] [seconds=5]      (after `npm run build`)
 * Starts its own redis-server (as bench/inboxes.mjs does), runs the receiver with `node --cpu-prof` pinned to
 * core 0 and autocannon on core 1, and prints the self-time summary of the measured run (warm-up cut out).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './lib/procs.mjs';
import { summarizeProfile } from './profile.mjs';

const [kind = 'redis', mode = 'receive', seconds = '5'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'profile-inbox-'));
const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolve(free));
  });
});
const redis = spawn(process.env.REDIS_CORE ? 'taskset' : 'redis-server', [...(process.env.REDIS_CORE ? ['-c', process.env.REDIS_CORE, 'redis-server'] : []), '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => redis.stdout.on('data', (chunk) => chunk.toString().includes('Ready to accept') && resolve()));
const loadgen = startChild('loadgen.mjs', [], { core: 1 });
await loadgen.ready;
try {
  const env = { INBOX_DB: join(dir, 'inbox.sqlite'), REDIS_URL: `redis://127.0.0.1:${port}` };
  const server = startChild('inbox-server.mjs', [kind, mode], { core: 0, env, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const { port: serverPort } = await server.ready;
  await loadgen.call({ type: 'run', port: serverPort, kind: 'ours', connections: 64, duration: 2, perClient: 1000 });
  const from = Number(process.hrtime.bigint() / 1000n);
  const { result } = await loadgen.call({ type: 'run', port: serverPort, kind: 'ours', connections: 64, duration: Number(seconds), perClient: 500 * Number(seconds) });
  const to = Number(process.hrtime.bigint() / 1000n);
  // Commands redis-server ran, per acknowledgement (warm-up included): how many puts share a round trip.
  const { execFileSync } = await import('node:child_process');
  const commandStats = execFileSync('redis-cli', ['-p', String(port), 'info', 'commandstats'], { encoding: 'utf8' });
  await server.call({ type: 'exit' }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  console.log(`${Math.round(result.rps)} acks/s while profiled`);
  console.log(commandStats.split('\n').filter((line) => line.startsWith('cmdstat_')).map((line) => line.split(',').slice(0, 2).join(' ')).join('\n'));
  console.log(JSON.stringify(summarizeProfile(profile, 40, { from, to }), null, 1));
} finally {
  await loadgen.stop();
  redis.kill('SIGTERM');
  if (process.env.KEEP_PROFILE) console.log(`kept ${dir}`); else rmSync(dir, { recursive: true, force: true });
}
