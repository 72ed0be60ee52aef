/**
 * The live page's copied commands (src/cli/page/client-actions.ts), run for real in bash, in a folder holding
 * a canary `.env`, against a node:http server that keeps the exact bytes of each request. A delivered body is
 * chosen by whoever sent it: whatever it holds, the command sends those bytes and never a file of the
 * developer's (curl reads an argument `@name` as a file to upload). The page test (live-page.test.ts) runs
 * them from the browser's clipboard; this one needs no browser, only bash and curl.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlCommand, sendCommand } from '../../src/cli/page/client-actions.js';
import type { Delivery, PageState } from '../../src/cli/page/client.js';

const CANARY = 'CANARY_SECRET=do-not-upload-me';
const work = mkdtempSync(join(tmpdir(), 'chat-webhooks-copy-'));
writeFileSync(join(work, '.env'), `${CANARY}\n`);
writeFileSync(join(work, 'body'), `${CANARY} (body)\n`);
const scripts = mkdtempSync(join(tmpdir(), 'chat-webhooks-copy-script-'));
const SCRIPT = join(scripts, 'pasted.sh');
afterAll(() => [work, scripts].forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const received: Received[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(200).end('ok');
  });
});

/** The page's globals, as listen renders them: its origin, and the user it requires (the password never). */
function onPage(origin: string, user: string | undefined): void {
  Object.assign(globalThis, { location: { origin }, state: { config: { user } } as unknown as PageState });
}

function delivery(rawBody: string, path = '/webhooks'): Delivery {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Basic ••••••' };
  return { seq: 7, receivedAt: '', method: 'POST', path, status: 200, verdict: 'valid', fields: [], issues: [], duplicate: false, headers, rawBody };
}

/**
 * Runs a command line as pasted into a terminal: bash reads it from a file, not from one argument (which
 * an exec limits to 128 KiB), its stdin closed (so a curl reading stdin it was not given gets nothing).
 */
function bash(commandLine: string): Promise<{ code: number; stderr: string }> {
  writeFileSync(SCRIPT, commandLine);
  return new Promise((resolve) => {
    const child = execFile('bash', [SCRIPT], { cwd: work, env: { ...process.env, CHAT_WEBHOOKS_PASSWORD: 'pw' } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
    child.stdin?.end();
  });
}

/** Runs the copied curl command; returns the one request it made. */
async function replayed(command: string): Promise<Received> {
  const before = received.length;
  const run = await bash(`${command} --silent --show-error --fail`);
  expect(run.code, run.stderr).toBe(0);
  expect(received.length - before).toBe(1);
  return received[before] as Received;
}

/** Bodies a sender could deliver: curl's `@file` and `@-`, shell syntax, quotes, line endings, printf's own `%`. */
const HOSTILE = [
  '@.env',
  '@body',
  '@./.env\n',
  '@-',
  '$(cat .env)',
  '`cat .env`',
  '"$(cat .env)"',
  "it's 'quoted' \\ \"twice\"",
  'line one\nline two\r\nline three\n',
  '-v',
  '--data @.env',
  '%s %d %% \\n',
  '',
  '{"trigger":"message_sent","text":"héllo ✓ 😀"}',
];

describe('copied commands, run in bash beside a canary .env', () => {
  let origin: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each(HOSTILE.map((body) => [JSON.stringify(body), body]))('copy as curl sends %s byte for byte, no file', async (_name, body) => {
    onPage(origin, undefined);
    const request = await replayed(curlCommand(delivery(body)));
    expect(request.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(request.body.toString('utf8')).not.toContain('CANARY');
    expect(request).toMatchObject({ method: 'POST', url: '/webhooks' });
    expect(request.headers['content-type']).toBe('application/json');
  });

  it('a body past 100 000 characters that starts with @ is sent, not uploaded', async () => {
    onPage(origin, undefined);
    const body = `@.env${'x'.repeat(150_000)}`;
    const request = await replayed(curlCommand(delivery(body)));
    expect(request.body.toString('utf8')).toBe(body);
  });

  it('a delivered path with curl glob syntax is one request to that path; the credentials come from the environment', async () => {
    onPage(origin, 'app');
    const path = '/webhooks{a,b}[1-3]?x=$(cat%20.env)';
    const command = curlCommand(delivery('{}', path));
    expect(command).not.toContain('pw');
    const request = await replayed(command);
    expect(request.url).toBe(path);
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('app:pw').toString('base64')}`);
  });

  it.each(HOSTILE.map((body) => [JSON.stringify(body), body]))('copy as send --file writes %s to its file byte for byte', async (_name, body) => {
    onPage(origin, undefined);
    // Its first command, which writes the file; the second (`npx chat-webhooks send --file`) is live-page.test.ts's.
    const command = sendCommand(delivery(body));
    const run = await bash(command.slice(0, command.lastIndexOf('\n')));
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(work, 'delivery-7.json')).equals(Buffer.from(body, 'utf8'))).toBe(true);
  });
});
