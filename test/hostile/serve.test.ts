/**
 * `chat-webhooks serve` against a hostile function result and a hostile client, on the built CLI: a header
 * value with CR LF (response splitting), a header name Node refuses, a statusCode out of range, a client that
 * hangs up mid-body. The process must answer each as API Gateway would (a 502) and keep serving, never inject
 * a header, never die.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, cleanEnv, runCli } from '../cli/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-serve-hostile-'));
let child: ChildProcess;
let url = '';
let stderr = '';

beforeAll(async () => {
  assertBuilt();
  writeFileSync(
    join(dir, 'hostile.mjs'),
    `export const handler = async (event) => {
  if (event.rawPath === '/crlf') return { statusCode: 200, headers: { 'x-a': 'ok\\r\\nSet-Cookie: evil=1' }, body: 'x' };
  if (event.rawPath === '/name') return { statusCode: 200, headers: { 'bad name': 'x' }, body: 'x' };
  if (event.rawPath === '/status') return { statusCode: 1000, body: 'x' };
  return { statusCode: 200, body: 'fine' };
};
`,
  );
  child = spawn(process.execPath, [CLI, 'serve', 'hostile.mjs', '--port', '0'], { cwd: dir, env: cleanEnv() });
  child.stdout!.resume();
  url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 10_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const port = /on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    });
  });
});

afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const alive = async () => expect(await (await fetch(`${url}/ok`)).text()).toBe('fine');

describe('serve against a hostile result or client', () => {
  it.each(['/crlf', '/name', '/status'])('%s: a 502, no injected header, and the server keeps serving', async (path) => {
    const response = await fetch(`${url}${path}`);
    expect(response.status).toBe(502);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(child.exitCode).toBeNull();
    await alive();
  });

  it('a client that hangs up mid-body does not end the server', async () => {
    const port = Number(new URL(url).port);
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial');
        setTimeout(() => (socket.destroy(), resolve()), 100);
      });
      socket.on('error', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(child.exitCode).toBeNull();
    await alive();
  });

  it('a --timeout past Lambda\'s 900 s is a usage error, not a setTimeout overflow that answers every request 504 at once', async () => {
    const run = await runCli(['serve', 'hostile.mjs', '--port', '0', '--timeout', '10000000'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/900/);
  });
});
