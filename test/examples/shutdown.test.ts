/**
 * Every shutdown pattern of the durable delivery guide and examples/ exits by itself on SIGTERM, for every inbox: the handler
 * replaces Node's default (which would end the process), so anything left open (an inbox's sockets, a timer, a
 * keep-alive connection) would keep it running until it is killed. Each pattern runs as its own process from
 * the built package, handles a delivery, gets SIGTERM, and must exit with code 0 within a second of its last
 * handler, with nothing open when its event loop ran dry (reported by test/examples/report-handles.mjs). None
 * of the examples calls process.exit.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postgresDatabase, startPostgres } from '../support/postgres-server.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcessWithoutNullStreams[] = [];
/** How long after its last handler a process may take to exit. */
const EXIT_BOUND_MS = 1000;

beforeAll(() => {
  if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
}, 120_000);

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

interface Line {
  text: string;
  at: number;
}

function start(script: string, env: Record<string, string>) {
  const reporter = join(root, 'test/examples/report-handles.mjs');
  const child = spawn(process.execPath, ['--import', reporter, script], { cwd: root, env: { ...process.env, PORT: '0', ...env } });
  children.push(child);
  const lines: Line[] = [];
  let partial = '';
  const take = (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) lines.push({ text, at: Date.now() });
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exit = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null, at: Date.now() }));
  // A process held open would otherwise run into the test's own timeout: give up on it well before.
  const stillRunning = () =>
    new Promise<{ code: 'still running'; signal: null; at: number }>((resolve) =>
      setTimeout(() => resolve({ code: 'still running', signal: null, at: Date.now() }), 5000),
    );
  const exited = () => Promise.race([exit, stillRunning()]);
  const waitFor = async (pattern: RegExp): Promise<Line> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const line = lines.find(({ text }) => pattern.test(text));
      if (line) return line;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never printed ${pattern}:\n${lines.map((l) => l.text).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { child, lines, exited, waitFor };
}

/** Posts one message_sent with a fresh id; fetch keeps its connection alive, as a real sender's may be. */
async function deliver(url: string): Promise<number> {
  const event = JSON.parse(readFileSync(join(root, 'fixtures/message_sent.json'), 'utf8'));
  event.data.message.id = `m-${Date.now()}-${Math.random()}`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('demo:demo-password').toString('base64')}` },
    body: JSON.stringify(event),
  });
  await response.text();
  return response.status;
}

/** What the child reported still open once its event loop ran dry: only its stdio pipes may be. */
function openAtExit(lines: Line[]): string[] {
  const report = lines.find(({ text }) => text.startsWith('active resources at exit: '));
  expect(report, 'the process never ran out of work (something kept it open)').toBeDefined();
  const open = JSON.parse(report!.text.slice('active resources at exit: '.length)) as string[];
  return open.filter((kind) => kind !== 'PipeWrap' && kind !== 'TTYWrap');
}

describe('the durable pattern (docs/durable-delivery.md, examples/durable.mjs): receiver and worker over their own inboxes', () => {
  const data = mkdtempSync(join(tmpdir(), 'shutdown-'));
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  const postgres = postgresDatabase();
  for (const inbox of ['memory', 'sqlite', 'redis', 'postgres'] as const) {
    it(`${inbox}: SIGTERM during a handler lets it finish, then the process exits by itself (code 0) within ${EXIT_BOUND_MS} ms`, async () => {
      const env = { INBOX: inbox, DATA_DIR: join(data, inbox), REDIS_URL: redis.url, DATABASE_URL: postgres.url, WORK_MS: '300' };
      const durable = start('examples/durable.mjs', env);
      const url = /listening on (\S+)/.exec((await durable.waitFor(/^listening on /)).text)?.[1] as string;
      expect(await deliver(url)).toBe(200);
      await durable.waitFor(/^handling /);
      const signalled = Date.now();
      durable.child.kill('SIGTERM');
      const handled = await durable.waitFor(/^handled /);
      const exit = await durable.exited();
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(handled.at).toBeGreaterThanOrEqual(signalled);
      console.log(`${inbox}: exited ${exit.at - handled.at} ms after its last handler (${exit.at - signalled} ms after SIGTERM)`);
      expect(exit.at - handled.at).toBeLessThan(EXIT_BOUND_MS);
      expect(durable.lines.map((l) => l.text)).toContain('stopped');
      expect(openAtExit(durable.lines)).toEqual([]);
    });
  }

  it(`postgres, during an outage (the server stopped): SIGTERM still ends the process by itself (code 0) within ${EXIT_BOUND_MS} ms`, async () => {
    const own = await startPostgres();
    try {
      const durable = start('examples/durable.mjs', { INBOX: 'postgres', DATABASE_URL: own.url });
      const url = /listening on (\S+)/.exec((await durable.waitFor(/^listening on /)).text)?.[1] as string;
      expect(await deliver(url)).toBe(200); // the schema is made, the workers wait on LISTEN
      await durable.waitFor(/^handled /);
      await own.stopFast();
      // Long enough for the listener to notice and the workers' claims to meet the closed server.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const signalled = Date.now();
      durable.child.kill('SIGTERM');
      const exit = await durable.exited();
      expect(exit).toMatchObject({ code: 0, signal: null });
      console.log(`postgres, during an outage: exited ${exit.at - signalled} ms after SIGTERM`);
      expect(exit.at - signalled).toBeLessThan(EXIT_BOUND_MS);
      expect(openAtExit(durable.lines)).toEqual([]);
    } finally {
      await own.stop();
    }
  }, 60_000);

  it(`redis, during an outage (Redis killed): SIGTERM still ends the process by itself (code 0) within ${EXIT_BOUND_MS} ms`, async () => {
    const own = await startRedis();
    try {
      const durable = start('examples/durable.mjs', { INBOX: 'redis', REDIS_URL: own.url });
      await durable.waitFor(/^listening on /);
      own.process.kill('SIGKILL');
      // Long enough for the workers' claims to be waiting on the lost connection.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const signalled = Date.now();
      durable.child.kill('SIGTERM');
      const exit = await durable.exited();
      expect(exit).toMatchObject({ code: 0, signal: null });
      console.log(`redis, during an outage: exited ${exit.at - signalled} ms after SIGTERM`);
      expect(exit.at - signalled).toBeLessThan(EXIT_BOUND_MS);
      expect(openAtExit(durable.lines)).toEqual([]);
    } finally {
      await own.stop();
    }
  });

  it('the durable delivery guide shows the same shutdown lines as examples/durable.mjs', () => {
    const guide = readFileSync(join(root, 'docs/durable-delivery.md'), 'utf8');
    const example = readFileSync(join(root, 'examples/durable.mjs'), 'utf8');
    const handler = /process\.once\('SIGTERM'[\s\S]*?\n\}\);/.exec(example)?.[0];
    expect(handler).toBeDefined();
    expect(guide).toContain(handler!);
  });
});

describe('the examples with a SIGTERM handler exit by themselves', () => {
  const cases = [
    { script: 'examples/demo.mjs', ready: /on (http:\S+\/webhooks)/, handled: /^received /, inbox: 'a SQLite inbox, consumed in process' },
    { script: 'examples/express.mjs', ready: /listening on (\S+)/, handled: /^message_sent: /, inbox: 'no inbox' },
    { script: 'examples/fastify.mjs', ready: /listening on (\S+)/, handled: /^message_sent: /, inbox: 'no inbox' },
    { script: 'examples/fetch.mjs', ready: /listening on (\S+)/, handled: /^message_sent: /, inbox: 'no inbox' },
    { script: 'examples/hono.mjs', ready: /listening on (\S+)/, handled: /^message_sent: /, inbox: 'no inbox' },
  ];
  for (const { script, ready, handled, inbox } of cases) {
    it(`${script} (${inbox}): code 0 within ${EXIT_BOUND_MS} ms of SIGTERM, a keep-alive connection open, nothing left open`, async () => {
      const data = mkdtempSync(join(tmpdir(), 'shutdown-demo-'));
      try {
        const example = start(script, { DATA_DIR: data });
        const url = ready.exec((await example.waitFor(ready)).text)?.[1] as string;
        expect(await deliver(url)).toBe(200);
        await example.waitFor(handled);
        const signalled = Date.now();
        example.child.kill('SIGTERM');
        const exit = await example.exited();
        expect(exit).toMatchObject({ code: 0, signal: null });
        console.log(`${script}: exited ${exit.at - signalled} ms after SIGTERM`);
        expect(exit.at - signalled).toBeLessThan(EXIT_BOUND_MS);
        expect(openAtExit(example.lines)).toEqual([]);
        expect(readFileSync(join(root, script), 'utf8')).not.toMatch(/process\.exit\(0\)/);
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    });
  }
});
