/**
 * What the CLI prints of text a sender chose, through the built CLI as a child process: an inbox entry's
 * trigger, key, last error, event and raw body (`inbox list|show`, the did-you-mean of an unknown key), a
 * capture's triggers and a target's answer (`replay`), a file's trigger (`validate`, `send --file`). A terminal
 * control in any of them reaches the operator's terminal written as `\uXXXX`: it cannot set the title, hide
 * text or forge a line. `--json` stays JSON that parses back to what was stored.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxClaim, InboxEntry } from '../../src/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { assertBuilt, runCli } from './run-cli.js';

/** Every control character but the line feed: what a line of output must not hold. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;
/** Sets the terminal's title, clears the screen, starts a forged line; C1's CSI and U+2028 too. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\r\nOK all good\u009b31m\u2028';

const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-escape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function expectNoControl(text: string): void {
  const found = CONTROL.exec(text);
  expect(found, `U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`).toBeNull();
}

describe('inbox list and show print a hostile entry escaped', () => {
  const path = join(dir, 'inbox.db');
  const key = `key${HOSTILE}`;
  const event = { trigger: `trigger${HOSTILE}`, appId: 'app', data: { text: HOSTILE } };
  // A body that parsed, with its own line breaks (CRLF) and a C1 control and U+2028 raw in a string.
  const rawBody = JSON.stringify(event, null, 1).replace('"app"', '"app\u009b2J\u2028"').replaceAll('\n', '\r\n');

  beforeAll(async () => {
    assertBuilt();
    const inbox = sqliteInbox({ path });
    const stored: InboxEntry = { key, trigger: event.trigger, event: event as unknown as InboxEntry['event'], rawBody, receivedAt: Date.now() };
    await inbox.put(stored);
    const claim = (await inbox.claim({ leaseMs: 30_000, waitMs: 0 })) as InboxClaim;
    await inbox.fail(claim, { dead: true, error: `TypeError: ${HOSTILE}` });
    await inbox.close();
  });

  it('list: one line for the entry, one for its error, escaped; --json parses back to the stored text', async () => {
    const { code, stdout } = await runCli(['inbox', 'list', '--sqlite', path]);
    expect(code).toBe(0);
    expectNoControl(stdout);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('trigger\\u001b]0;pwned\\u0007\\u001b[2J\\u000d\\u000aOK all good\\u009b31m\\u2028');
    expect(lines[0]).toContain('key\\u001b]0;pwned');
    expect(lines[1]).toContain('TypeError: \\u001b]0;pwned');
    expect(lines[2]).toBe('1 dead entry');

    const json = await runCli(['inbox', 'list', '--sqlite', path, '--json']);
    expectNoControl(json.stdout);
    expect(JSON.parse(json.stdout)).toMatchObject({ key, trigger: event.trigger, lastError: `TypeError: ${HOSTILE}`, rawBody });
  });

  it('show: the event and the raw body keep their lines, every other control escaped', async () => {
    const { code, stdout } = await runCli(['inbox', 'show', key, '--sqlite', path]);
    expect(code).toBe(0);
    expectNoControl(stdout);
    const body = stdout.slice(stdout.indexOf('\nraw body\n') + '\nraw body\n'.length).trimEnd();
    expect(body).toBe(rawBody.split('\n').map((line) => line.replaceAll('\r', '\\u000d').replaceAll('\u009b', '\\u009b').replaceAll('\u2028', '\\u2028')).join('\n'));
    const shownEvent = stdout.slice(stdout.indexOf('\nevent\n') + '\nevent\n'.length, stdout.indexOf('\nraw body\n'));
    expect(shownEvent.split('\n').length).toBeGreaterThan(3);
    expect(shownEvent).toContain('"app\\u009b2J\\u2028"');
  });

  it('a key not found: the did-you-mean names the stored key escaped', async () => {
    const { code, stderr } = await runCli(['inbox', 'show', `${key}x`, '--sqlite', path]);
    expect(code).toBe(1);
    expectNoControl(stderr);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toContain('Did you mean "key\\u001b]0;pwned');
  });

  it('retry of a key that is not dead names it escaped', async () => {
    const other = join(dir, 'pending.db');
    const inbox = sqliteInbox({ path: other });
    await inbox.put({ key, trigger: 'message_sent', event: {} as InboxEntry['event'], rawBody: '{}', receivedAt: Date.now() });
    await inbox.close();
    const { code, stderr } = await runCli(['inbox', 'retry', key, '--sqlite', other]);
    expect(code).toBe(1);
    expectNoControl(stderr);
    expect(stderr).toBe(`"${key.replace(/[\u0000-\u001f\u007f-\u009f\u2028]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}" is pending, not dead: nothing to retry.\n`);
  });
});

describe('replay and validate print a capture’s text escaped', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    assertBuilt();
    // A target whose refusal repeats what it was sent.
    server = createServer((_req, res) => res.writeHead(400).end(`refused ${HOSTILE}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('replay: the capture’s trigger and the target’s answer', async () => {
    const file = join(dir, 'capture.ndjson');
    writeFileSync(file, `${JSON.stringify({ trigger: `t${HOSTILE}`, appId: 'app' })}\n`);
    const { code, stdout } = await runCli(['replay', file, '--url', url]);
    expect(code).toBe(1);
    expectNoControl(stdout);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(stdout).toContain('t\\u001b]0;pwned');
    expect(stdout).toContain('refused \\u001b]0;pwned');
  });

  it('validate: a file’s unknown trigger', async () => {
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ trigger: `t${HOSTILE}`, appId: 'app', data: {} }));
    const { code, stdout } = await runCli(['validate', unknown]);
    expect(code).toBe(0);
    expectNoControl(stdout);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(stdout).toContain('t\\u001b]0;pwned');
  });

  it('an error quoting a file’s text (send --file of another trigger) is escaped on stderr', async () => {
    const file = join(dir, 'event.json');
    writeFileSync(file, JSON.stringify({ trigger: `t${HOSTILE}`, appId: 'app', data: {} }));
    const { code, stderr } = await runCli(['send', 'message_sent', '--file', file, '--url', url]);
    expect(code).toBe(2);
    expectNoControl(stderr);
    expect(stderr).toContain('holds a "t\\u001b]0;pwned');
  });
});
