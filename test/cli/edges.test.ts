/**
 * The command line's sharp edges (issue 25, item 5): a mistyped `--set` path, unknown triggers, `--quiet`,
 * and `replay` of a capture holding refused deliveries. The built CLI as child processes, into a real `listen`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Listener, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-edges-'));
const AUTH = ['--user', 'app', '--password', 'pw'];

let listener: Listener;

beforeAll(async () => {
  assertBuilt();
  listener = await Listener.start(AUTH);
});

afterAll(async () => {
  expect(await listener.stop()).toBe(0);
});

/** Sends into listen; resolves the result and the records listen made of it. */
async function send(args: string[], expected: number) {
  const before = listener.records.length;
  // Credentials first: a --password in args overrides them.
  const result = await runCli(['send', ...AUTH, ...args, '--url', listener.url]);
  const records = (await listener.waitFor(before + expected)).slice(before);
  return { result, records };
}

describe('send --set and --add', () => {
  it('a path the event does not have is refused before anything is sent, with the closest paths it has', async () => {
    const before = listener.records.length;
    const { code, stdout, stderr } = await runCli(['send', 'message_sent', '--url', listener.url, ...AUTH, '--set', 'data.mesage.id=5']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('--set data.mesage.id: the event has no "data.mesage". Did you mean "data.message.id"?');
    expect(stderr).toContain('use --add data.mesage.id=5');
    // Nothing reached the receiver: a later send is the next record.
    await send(['user_blocked'], 1);
    expect(listener.records.length).toBe(before + 1);
  });

  it('--add creates a new field (and the objects on its way); --set then changes what it made', async () => {
    const { result, records } = await send(
      ['message_sent', '--add', 'data.message.data.metadata.note=first', '--set', 'data.message.data.metadata.note=second'],
      1,
    );
    expect(result.code).toBe(0);
    const body = JSON.parse(records[0]!.rawBody) as { data: { message: { data: { metadata: unknown } } } };
    expect(body.data.message.data.metadata).toEqual({ note: 'second' });
  });

  it('--set of a field the event has still works, and keeps an id a string', async () => {
    const { records } = await send(['message_sent', '--set', 'data.message.id=777'], 1);
    expect((JSON.parse(records[0]!.rawBody) as { data: { message: { id: unknown } } }).data.message.id).toBe('777');
  });
});

describe('send of a trigger this version does not know', () => {
  it('is refused by name, saying how to send it anyway', async () => {
    const { code, stderr } = await runCli(['send', 'poll_closed', '--url', listener.url]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/Unknown trigger "poll_closed".*--allow-unknown or give --file/);
  });

  it('--allow-unknown sends a fresh event of it each time: accepted as unknown (onUnknown), never a duplicate', async () => {
    const { result, records } = await send(['poll_closed', '--allow-unknown', '--count', '2'], 2);
    expect(result.code).toBe(0);
    expect(records.map((record) => [record.status, record.verdict, record.trigger, record.duplicate])).toEqual([
      [200, 'unknown', 'poll_closed', false],
      [200, 'unknown', 'poll_closed', false],
    ]);
    expect(records[0]!.key).not.toBe(records[1]!.key);
  });

  it('--file with an unknown trigger is sent as it is', async () => {
    const file = join(dir, 'unknown.json');
    writeFileSync(file, JSON.stringify({ trigger: 'poll_closed', data: { poll: { id: 'p1' } }, appId: 'a', region: 'us', webhook: 'w' }));
    const { result, records } = await send(['--file', file], 1);
    expect(result.code).toBe(0);
    expect(records[0]).toMatchObject({ status: 200, verdict: 'unknown', trigger: 'poll_closed' });
  });
});

describe('send --quiet', () => {
  it('prints only the summary: one line for three events, and for one', async () => {
    const three = await send(['message_sent', '--count', '3', '--quiet'], 3);
    expect(three.result.code).toBe(0);
    expect(three.result.stdout).toMatch(/^3 sent: 3 × 200 · p50 .*\/s\)\n$/);
    expect(three.result.stderr).toBe('');
    const one = await send(['message_sent', '-q'], 1);
    expect(one.result.stdout).toMatch(/^1 sent: 1 × 200 · /);
    expect(one.result.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('with --json: the summary record only', async () => {
    const { result } = await send(['message_sent', '--count', '2', '--quiet', '--json'], 2);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([{ summary: expect.objectContaining({ count: 2, ok: 2, failed: 0 }) }]);
  });
});

/** A bare server standing for the developer's app; keeps the bodies it received. */
async function startApp(): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, bodies };
}

describe('replay of a capture with refused deliveries', () => {
  it('skips what the receiver refused when captured, says so, and sends it with --include-refused', async () => {
    const accepted = await send(['user_blocked'], 1);
    const refused = await send(['message_sent', '--password', 'wrong'], 1);
    const after = await send(['user_unblocked'], 1);
    expect(refused.records[0]).toMatchObject({ status: 401, verdict: 'refused' });
    const captured = [accepted.records[0], refused.records[0], after.records[0]];
    const file = join(dir, 'captured.ndjson');
    writeFileSync(file, `${captured.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const app = await startApp();
    try {
      const plain = await runCli(['replay', file, '--url', app.url]);
      expect(plain.code).toBe(0);
      expect(app.bodies).toEqual([captured[0]!.rawBody, captured[2]!.rawBody]);
      expect(plain.stderr).toContain('Skipped 1 delivery refused when captured (line 2); --include-refused sends them too.');
      app.bodies.length = 0;
      const all = await runCli(['replay', file, '--url', app.url, '--include-refused']);
      expect(all.code).toBe(0);
      expect(app.bodies).toEqual(captured.map((record) => record!.rawBody));
      expect(all.stderr).not.toContain('Skipped');
    } finally {
      app.server.close();
    }
  });

  it('a capture of refused deliveries only is a usage error naming --include-refused', async () => {
    const refused = await send(['message_sent', '--password', 'wrong'], 1);
    const file = join(dir, 'refused.ndjson');
    writeFileSync(file, `${JSON.stringify(refused.records[0])}\n`);
    const { code, stderr } = await runCli(['replay', file, '--url', 'http://127.0.0.1:9/']);
    expect(code).toBe(2);
    expect(stderr).toContain('holds only refused deliveries; --include-refused sends them.');
  });
});
