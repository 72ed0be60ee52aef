/** A redis-server of the benchmark's own, on a free port, its files in `dir` (the benchmarks that count a Redis inbox's receiver). */
import { spawn } from 'node:child_process';
import net from 'node:net';

export async function startRedis(dir) {
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk) => chunk.toString().includes('Ready to accept') && resolve());
  });
  return { url: `redis://127.0.0.1:${port}`, child };
}
