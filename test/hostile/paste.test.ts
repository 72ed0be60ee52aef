/**
 * The live page's copied commands pasted into a terminal, as a developer does (red team, issue 33 item 10):
 * tmux runs an interactive bash (bracketed paste on, bash 5.1's default) and pastes the command with
 * `paste-buffer -p`, as a terminal does. A refused delivery's body can hold any character, and control
 * characters pasted raw are keys: `ESC[201~` ends the bracketed paste, Ctrl-A goes to the start of the line,
 * and what follows is typed there, a command of the sender's run with the developer's. The command must write
 * the body's exact bytes and run nothing else. test/cli/copy-commands.test.ts runs the commands from a file.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlCommand, printfArguments, sendCommand } from '../../src/cli/page/client-actions.js';
import type { Delivery, PageState } from '../../src/cli/page/client.js';

const work = mkdtempSync(join(tmpdir(), 'chat-webhooks-paste-'));
const SOCKET = `chat-webhooks-paste-${process.pid}`;
afterAll(() => {
  try {
    execFileSync('tmux', ['-L', SOCKET, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // No server left: every test's session ended.
  }
  rmSync(work, { recursive: true, force: true });
});

const bodies: Buffer[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    bodies.push(Buffer.concat(chunks));
    res.writeHead(200).end('ok');
  });
});
let origin = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(globalThis, { location: { origin }, state: { config: { user: undefined } } as unknown as PageState });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function delivery(rawBody: string): Delivery {
  const headers = { 'content-type': 'application/json' };
  return { seq: 9, receivedAt: '', method: 'POST', path: '/webhooks', status: 400, verdict: 'invalid', fields: [], issues: [], duplicate: false, headers, rawBody };
}

/** Ends the paste, goes to the line's start, types a command there (touch `marker`), comes back and pastes on. */
const injection = (marker: string) => `x\u001b[201~\u0001touch ${marker}; \u0005\u001b[200~y`;
const INJECTION = injection('PWNED');
/** Every control character, C1 ones too, with printf's and %b's own syntax around them. */
const EVERY_CONTROL = `${Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('')}\u007f\u0080\u009b\u009f \\c \\0101 \\\\ %s %b '"$(id)`;

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pastes `command` into a fresh interactive bash in `work`, presses Enter, and waits for `done` to exist. */
async function pasted(command: string, done: string): Promise<void> {
  const session = `s${Math.random().toString(36).slice(2, 8)}`;
  const shell = `cd ${work} && env -i HOME=${work} PATH=${process.env.PATH} TERM=xterm-256color PS1='$ ' bash --norc --noprofile -i`;
  tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', shell);
  try {
    const buffer = join(work, `${session}.txt`);
    writeFileSync(buffer, `${command}; touch ${done}`);
    // The prompt first: a paste before bash reads its terminal would reach it as plain input.
    for (let i = 0; i < 200 && !tmux('capture-pane', '-p', '-t', session).includes('$'); i++) await pause(25);
    tmux('load-buffer', '-b', session, buffer);
    tmux('paste-buffer', '-p', '-d', '-b', session, '-t', session);
    tmux('send-keys', '-t', session, 'Enter');
    for (let i = 0; i < 400 && !existsSync(join(work, done)); i++) await pause(25);
    expect(existsSync(join(work, done)), tmux('capture-pane', '-p', '-t', session)).toBe(true);
  } finally {
    tmux('kill-session', '-t', session);
  }
}

describe('copied commands pasted into bash through tmux', () => {
  it.each([
    ['copy as curl', (body: string) => curlCommand(delivery(body)) + ' --silent --output /dev/null'],
    ['copy as send --file (its printf)', (body: string) => sendCommand(delivery(body)).split('\n')[0] as string],
  ])('%s: a body that ends the bracketed paste runs no command of its own, and its bytes are sent exact', async (name, command) => {
    const before = bodies.length;
    const marker = `PWNED-${name.length}`;
    await pasted(command(injection(marker)), `done-${name.length}`);
    expect(existsSync(join(work, marker))).toBe(false);
    const written = name === 'copy as curl' ? bodies[before] : readFileSync(join(work, 'delivery-9.json'));
    expect(written?.equals(Buffer.from(injection(marker), 'utf8'))).toBe(true);
  });
});

describe('printf arguments for a body with control characters', () => {
  it('hold none of them, only the line feed, and write the exact bytes in bash (backslashes, \\c and % too)', async () => {
    for (const body of [EVERY_CONTROL, INJECTION, 'plain\nlines\n', '']) {
      const args = printfArguments(body);
      expect(args).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      const out = await new Promise<Buffer>((resolve, reject) =>
        execFile('bash', ['-c', `printf ${args}`], { encoding: 'buffer' }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
      );
      expect(out.equals(Buffer.from(body, 'utf8')), JSON.stringify(body)).toBe(true);
    }
  });
});
