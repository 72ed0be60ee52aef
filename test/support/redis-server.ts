/**
 * Starts a real redis-server on a free port, AOF on, in a temporary folder; `stop()` ends it and removes
 * the folder. Tests that need Redis start their own: nothing is shared with other suites or the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `at` starts it again where a stopped one ran (its port and its folder, with the AOF it left). */
export async function startRedis(extraArgs: string[] = [], at?: { port: number; dir: string }): Promise<RedisServer> {
  const dir = at?.dir ?? mkdtempSync(join(tmpdir(), 'inbox-redis-'));
  const port = at?.port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--save', '', '--dir', dir, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not start redis-server (is it installed? apt-get install redis-server): ${error.message}`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One Redis server for a whole test file, started before its tests and stopped after them, with a plain
 * client made on first use (for the tests that look at Redis's keys behind the inbox).
 */
export function redisPerSuite(): { readonly server: RedisServer; readonly client: Redis } {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await client?.quit();
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('The suite Redis starts in beforeAll: use it inside tests.');
      return server;
    },
    get client() {
      return (client ??= new Redis(this.server.url));
    },
  };
}
