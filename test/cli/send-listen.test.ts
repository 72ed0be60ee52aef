/**
 * `send` into `listen` over loopback, `listen --forward` to a plain server, `replay` of what `listen --json`
 * captured: the built CLI as child processes, the receiver the package's own.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, Listener, runCli, runInTerminal } from './run-cli.js';
import { rawRequest, startDeveloperApp, type DeveloperApp } from '../support/developer-app.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-send-'));
const AUTH = ['--user', 'app', '--password', 'pw'];

let listener: Listener;
let app: DeveloperApp;

beforeAll(async () => {
  assertBuilt();
  app = await startDeveloperApp();
  listener = await Listener.start([...AUTH, '--forward', app.url]);
});

afterAll(async () => {
  expect(await listener.stop()).toBe(0);
  await app.close();
});

/** A request with the `Host` (and other headers) a browser would send; fetch would not let a test set Host. */
const raw = rawRequest;

/** Sends and returns the records listen made of this send. */
async function sendAndRecord(args: string[], expected: number) {
  const before = listener.records.length;
  const result = await runCli(['send', ...args, '--url', `${listener.url}webhooks`]);
  const records = (await listener.waitFor(before + expected)).slice(before);
  return { result, records };
}

describe('send into listen', () => {
  it('a fixture event arrives valid, with its key, forwarded with the platform headers', async () => {
    const forwardedBefore = app.received.length;
    const { result, records } = await sendAndRecord(['message_sent', ...AUTH], 1);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^200 +[\d.]+ ms {2}#1 message_sent\n$/);
    const [record] = records;
    expect(record).toMatchObject({ status: 200, verdict: 'valid', trigger: 'message_sent', duplicate: false, issues: [] });
    // The package's idempotency key: message_sent's documented field is the message id.
    const sent = JSON.parse(record?.rawBody ?? '') as { data: { message: { id: string } } };
    expect(record?.key).toBe(`2601c4f1a2b3c4d5:wh_chat_events:message_sent:${sent.data.message.id}`);
    expect(record?.fields).toContainEqual(['sender', 'superhero1']);
    // Forwarded byte for byte, with the headers the platform sent (its capitalized content type included).
    expect(record?.forward).toMatchObject({ url: app.url, status: 204 });
    const forwarded = app.received[forwardedBefore];
    expect(forwarded?.body).toBe(record?.rawBody);
    expect(forwarded?.headers['content-type']).toBe('Application/json');
    expect(forwarded?.headers.authorization).toBe(`Basic ${Buffer.from('app:pw').toString('base64')}`);
  });

  it('each generated event has its own ids: 20 sends, 20 keys, no duplicate; a progress bar and a summary', async () => {
    const { result, records } = await sendAndRecord(['call_ended', ...AUTH, '--count', '20', '--concurrency', '4', '--progress'], 20);
    expect(result.code).toBe(0);
    expect(result.stdout.match(/^200 /gm)).toHaveLength(20);
    expect(result.stdout).toMatch(/^20 sent: 20 × 200 · p50 [\d.]+ ms · p99 [\d.]+ ms/m);
    expect(result.stderr).toContain('20/20 100%');
    expect(new Set(records.map((record) => record.key)).size).toBe(20);
    expect(records.every((record) => record.verdict === 'valid' && !record.duplicate)).toBe(true);
    const sessions = records.map((record) => (JSON.parse(record.rawBody) as { data: { sessionId: string } }).data.sessionId);
    expect(new Set(sessions).size).toBe(20);
  });

  it('on a terminal the progress bar shows by itself, colored; with NO_COLOR it has no color', async () => {
    const before = listener.records.length;
    const command = `'${process.execPath}' '${CLI}' send user_unblocked --url ${listener.url} --user app --password pw --count 3`;
    const colored = await runInTerminal(command);
    expect(colored.stdout).toContain('3/3 100%');
    expect(colored.stdout).toContain('\u001b[32m200');
    const plain = await runInTerminal(command, { NO_COLOR: '1' });
    expect(plain.stdout).toContain('3/3 100%');
    expect(plain.stdout).toMatch(/^3 sent: 3 × 200/m);
    expect(plain.stdout).not.toContain('\u001b[3');
    // Both runs' deliveries are in before the next test counts its own.
    await listener.waitFor(before + 6);
  });

  it('--json: one record per event and a summary record', async () => {
    const { result } = await sendAndRecord(['message_reaction_added', ...AUTH, '--count', '2', '--json'], 2);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ label: 'message_reaction_added', status: 200 });
    expect(lines[2]).toMatchObject({ summary: { count: 2, ok: 2, failed: 0, statuses: { 200: 2 } } });
  });

  it('--file sent twice: the repeat is recognised as a duplicate', async () => {
    const file = join(dir, 'event.json');
    writeFileSync(file, JSON.stringify({ trigger: 'group_updated', data: { group: { guid: 'g1', name: 'One' } } }));
    const { result, records } = await sendAndRecord(['--file', file, ...AUTH, '--count', '2'], 2);
    expect(result.code).toBe(0);
    expect(records.map((record) => record.duplicate)).toEqual([false, true]);
    expect(records[0]?.key).toBe(records[1]?.key);
  });

  it('two different bodies of one event (same message id) are one event: the second is a duplicate', async () => {
    const { records } = await sendAndRecord(['message_sent', ...AUTH, '--count', '2', '--set', 'data.message.id=same-event-1'], 2);
    expect(records[0]?.rawBody).not.toBe(records[1]?.rawBody);
    expect(records.map((record) => record.duplicate)).toEqual([false, true]);
  });

  it('--set changes the event; a field keeps its type (an id stays a string)', async () => {
    const { records } = await sendAndRecord(['message_sent', ...AUTH, '--set', 'data.message.id=777', '--set', 'data.message.data.text=hi there'], 1);
    const event = JSON.parse(records[0]?.rawBody ?? '') as { data: { message: { id: unknown; data: { text: unknown } } } };
    expect(event.data.message.id).toBe('777');
    expect(event.data.message.data.text).toBe('hi there');
    expect(records[0]?.verdict).toBe('valid');
  });

  it('an invalid payload sent with --no-validate is accepted and listed with the path of each issue', async () => {
    const { result, records } = await sendAndRecord(['message_sent', ...AUTH, '--no-validate', '--set', 'data.message.sentAt=soon'], 1);
    expect(result.code).toBe(0);
    expect(records[0]).toMatchObject({ status: 200, verdict: 'invalid', code: 'invalid_payload' });
    expect(records[0]?.issues.map((issue) => issue.path)).toEqual(['data.message.sentAt']);
  });

  it('wrong credentials: 401, send exits 1, listen lists the refusal and does not forward it', async () => {
    const forwardedBefore = app.received.length;
    const { result, records } = await sendAndRecord(['message_sent', '--user', 'app', '--password', 'wrong'], 1);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^401 /);
    expect(records[0]).toMatchObject({ status: 401, verdict: 'refused', code: 'unauthorized' });
    expect(records[0]?.forward).toBeUndefined();
    expect(app.received.length).toBe(forwardedBefore);
  });

  it('credentials from the environment', async () => {
    const before = listener.records.length;
    const result = await runCli(['send', 'user_blocked', '--url', listener.url], {
      env: { CHAT_WEBHOOKS_USER: 'app', CHAT_WEBHOOKS_PASSWORD: 'pw' },
    });
    expect(result.code).toBe(0);
    expect((await listener.waitFor(before + 1))[before]).toMatchObject({ status: 200, trigger: 'user_blocked' });
  });
});

describe('replay', () => {
  it('re-sends what listen --json captured, in order, byte for byte, paced by --rate', async () => {
    const captured = listener.records.slice(0, 4);
    const file = join(dir, 'captured.ndjson');
    writeFileSync(file, `${captured.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const target = await startDeveloperApp();
    try {
      const result = await runCli(['replay', file, '--url', target.url, '--rate', '10']);
      expect(result.code).toBe(0);
      expect(target.received.map((delivery) => delivery.body)).toEqual(captured.map((record) => record.rawBody));
      expect(target.received[0]?.headers['content-type']).toBe('Application/json');
      expect(result.stdout).toMatch(/^4 sent: 4 × 204/m);
      // Four starts at 10 a second: the last no earlier than 300 ms after the first.
      expect(result.ms).toBeGreaterThanOrEqual(300);
    } finally {
      await target.close();
    }
  });

  it('exits 1 when the receiver cannot be reached', async () => {
    const file = join(dir, 'one.ndjson');
    writeFileSync(file, `${JSON.stringify({ trigger: 'group_deleted', data: { group: { guid: 'g' } } })}\n`);
    const result = await runCli(['replay', file, '--url', 'http://127.0.0.1:9/']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ERR /);
  });
});

describe('listen', () => {
  it('a busy port is one line on stderr and exit 1', async () => {
    const result = await runCli(['listen', '--port', String(listener.port)]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`chat-webhooks: Port ${listener.port} is already in use; pick another with --port.`);
  });

  it('lists refusals too: wrong method, not JSON, an oversized body', async () => {
    const before = listener.records.length;
    const url = `${listener.url}webhooks`;
    const headers = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('app:pw').toString('base64')}` };
    expect((await fetch(url, { method: 'PUT', headers })).status).toBe(405);
    expect((await fetch(url, { method: 'POST', headers, body: '{"trigger":' })).status).toBe(400);
    const huge = await fetch(url, { method: 'POST', headers, body: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    const records = (await listener.waitFor(before + 3)).slice(before);
    expect(records.map((record) => [record.status, record.verdict, record.code]).sort()).toEqual([
      [400, 'refused', 'invalid_json'],
      [405, 'refused', 'method_not_allowed'],
      [413, 'refused', 'payload_too_large'],
    ]);
    expect(records.find((record) => record.status === 400)?.issues[0]?.message).toMatch(/not valid JSON/);
    expect(records.find((record) => record.status === 405)?.issues).toEqual([]);
    // The rest of an oversized body, drained after the 413, is not kept: at most the receiver's limit.
    expect(records.find((record) => record.status === 413)?.rawBody.length).toBeLessThanOrEqual(1024 * 1024);
  });

  it('prints each delivery readably without --json', async () => {
    const plain = await Listener.startPlain();
    try {
      const sent = await runCli(['send', 'message_sent', '--url', plain.url, '--no-validate', '--set', 'data.message.sentAt=soon']);
      expect(sent.code).toBe(0);
      const text = await plain.waitForText(/key 2601c4f1a2b3c4d5:wh_chat_events:message_sent:/);
      expect(text).toMatch(/ 200 message_sent ✗ invalid_payload \(accepted, reported to onError\)/);
      expect(text).toMatch(/^ {4}data\.message\.sentAt: \S/m);
      expect(text).toMatch(/key 2601c4f1a2b3c4d5:wh_chat_events:message_sent:\d+ · not stored: invalid/);
    } finally {
      await plain.stop();
    }
  });
});

describe('listen is safe to leave running', () => {
  it('answers the page and its feed only for Host values naming it (loopback, with its port): 421 otherwise', async () => {
    const port = listener.port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      expect((await raw(port, '/', { host })).status, host).toBe(200);
      expect((await raw(port, '/events', { host })).status, host).toBe(200);
    }
    // A rebinding page's requests name its own host; a wrong port is another server.
    for (const host of [`evil.example:${port}`, 'evil.example', `localhost:${port + 1}`, `127.0.0.1.evil.example:${port}`, '']) {
      for (const path of ['/', '/events', '/events?after=0']) {
        const answer = await raw(port, path, { host });
        expect(answer.status, `${host} ${path}`).toBe(421);
        expect(answer.body).not.toContain('rawBody');
      }
    }
  });

  it('takes webhooks for any Host (a tunnel forwards its public name) but resend only from the page itself', async () => {
    const before = listener.records.length;
    const body = JSON.stringify({ trigger: 'group_deleted', data: { group: { guid: 'through-a-tunnel' } } });
    const headers = { host: 'abc.trycloudflare.com', 'content-type': 'application/json', authorization: `Basic ${Buffer.from('app:pw').toString('base64')}` };
    expect((await raw(listener.port, '/webhooks', headers, 'POST', body)).status).toBe(200);
    const [record] = (await listener.waitFor(before + 1)).slice(before);
    expect(record?.trigger).toBe('group_deleted');
    const resend = `/_listen/resend/${record?.seq}`;
    const host = `127.0.0.1:${listener.port}`;
    expect((await raw(listener.port, resend, { host }, 'POST')).status).toBe(403);
    expect((await raw(listener.port, resend, { host, origin: 'https://evil.example' }, 'POST')).status).toBe(403);
    expect((await raw(listener.port, resend, { host: 'evil.example', origin: `http://${host}` }, 'POST')).status).toBe(421);
    const forwardedBefore = app.received.length;
    const resent = await raw(listener.port, resend, { host, origin: `http://${host}` }, 'POST');
    expect(resent.status).toBe(200);
    expect(JSON.parse(resent.body)).toMatchObject({ status: 204 });
    expect(app.received.slice(forwardedBefore).map((delivery) => delivery.body)).toEqual([body]);
    expect(app.received[forwardedBefore]?.headers.authorization).toBe(headers.authorization);
  });

  it('sends the page with a strict Content-Security-Policy (its script and style by hash), nosniff, no framing', async () => {
    const page = await raw(listener.port, '/', { host: `localhost:${listener.port}` });
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'; style-src 'sha256-[A-Za-z0-9+/]+=*'; connect-src 'self'/);
    expect(policy).not.toContain('unsafe');
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const events = await raw(listener.port, '/events', { host: `localhost:${listener.port}` });
    expect(events.headers['x-content-type-options']).toBe('nosniff');
    expect(events.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  });

  it('the credential of a delivery is masked in its record and on the page', async () => {
    const { records } = await sendAndRecord(['user_blocked', ...AUTH], 1);
    expect(records[0]?.headers?.authorization).toBe('Basic ••••••');
    expect(JSON.stringify(records[0])).not.toContain(Buffer.from('app:pw').toString('base64'));
    const page = await raw(listener.port, '/', { host: `localhost:${listener.port}` });
    expect(page.body).toContain('Basic ••••••');
    expect(page.body).not.toContain(Buffer.from('app:pw').toString('base64'));
  });

  it('prints no raw control character: a trigger, a key or an answer cannot forge lines or drive the terminal', async () => {
    const plain = await Listener.startPlain();
    try {
      const hostile = 'evil\u001b[2J\r\n12:00:00 200 message_sent \u2713 valid\u009b31m\u2028';
      const body = JSON.stringify({ trigger: hostile, data: { group: { guid: 'x\u001b]0;owned\u0007' } } });
      expect((await fetch(plain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
      const text = await plain.waitForText(/evil/);
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
      expect(text).toContain('evil\\u001b[2J\\u000d\\u000a12:00:00 200 message_sent \u2713 valid\\u009b31m\\u2028');
      expect(text.split('\n').filter((line) => line.startsWith('12:00:00'))).toEqual([]);
    } finally {
      await plain.stop();
    }
    // NDJSON escapes C0 controls itself; C1 and U+2028/2029 are escaped too, and the record is the same JSON.
    const before = listener.records.length;
    const body = JSON.stringify({ trigger: 'x\u009b2J\u2028', data: {} });
    const auth = `Basic ${Buffer.from('app:pw').toString('base64')}`;
    await fetch(listener.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body });
    const [record] = (await listener.waitFor(before + 1)).slice(before);
    expect(record?.trigger).toBe('x\u009b2J\u2028');
    expect(listener.text).not.toMatch(/[\u007f-\u009f\u2028\u2029]/);
  });

  it('--events shows and captures only the triggers named (the others are still answered)', async () => {
    const only = await Listener.start(['--events', 'user_blocked,group_creatd']);
    try {
      expect(only.stderr).toContain('"group_creatd", which is not a known trigger. Did you mean "group_created"');
      expect(only.stderr).toContain('showing only user_blocked, group_creatd');
      expect((await runCli(['send', 'message_sent', '--url', only.url])).code).toBe(0);
      expect((await runCli(['send', 'user_blocked', '--url', only.url])).code).toBe(0);
      const notJson = await fetch(only.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      expect(notJson.status).toBe(400);
      const records = await only.waitFor(2);
      expect(records.map((record) => [record.trigger, record.status])).toEqual([
        ['user_blocked', 200],
        [undefined, 400],
      ]);
    } finally {
      await only.stop();
    }
  });

  it('--help says how the platform reaches a local port: a tunnel, with commands', async () => {
    const help = await runCli(['listen', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('cloudflared tunnel --url http://localhost:3000');
    expect(help.stdout).toContain('ngrok http 3000');
    expect(help.stdout).toContain('--events <triggers>');
  });
});
