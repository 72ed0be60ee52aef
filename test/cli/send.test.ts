/**
 * `send` in-process (src/cli/send.ts), against a real local node:http receiver that records what arrives:
 * which events are built (a sample per trigger, a file as it is, overrides in order), what is refused before
 * anything is sent, and the exit code. send-listen.test.ts and commands.test.ts run the built CLI the same way
 * a shell does; this file reaches the code a mutation run changes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../../src/cli/errors.js';
import { collectAddition, collectOverride } from '../../src/cli/overrides.js';
import { send, sendCommand } from '../../src/cli/send.js';

interface Received {
  authorization?: string;
  event: Record<string, unknown>;
  bytes: Buffer;
  contentType?: string;
}

let server: Server;
let url: string;
let received: Received[] = [];
let answerStatus = 200;
let stdout: string[] = [];
let stderr: string[] = [];
const lines = () => stdout.join('').split('\n').filter((line) => line !== '');
const dir = mkdtempSync(join(tmpdir(), 'send-test-'));

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const event = (() => {
        try {
          return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        } catch {
          return {}; // send --raw sends what it is given
        }
      })();
      received.push({ authorization: req.headers.authorization, event, bytes, contentType: req.headers['content-type'] });
      res.writeHead(answerStatus).end('OK');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  received = [];
  answerStatus = 200;
  // The summary line goes to stdout; keep the test output readable.
  stdout = [];
  stderr = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (stderr.push(String(chunk)), true));
  return () => vi.restoreAllMocks();
});

const options = (extra: Partial<Parameters<typeof send>[1]> = {}): Parameters<typeof send>[1] => ({ url, count: 1, concurrency: 1, validate: true, quiet: true, progress: false, ...extra });

async function usage(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => expect.unreachable('should have been refused'), (reason: unknown) => reason);
  expect(error).toBeInstanceOf(CliError);
  expect((error as CliError).exitCode).toBe(EXIT_USAGE);
  return (error as CliError).message;
}

const message = (event: Record<string, unknown>) => (event.data as { message: Record<string, unknown> }).message;

describe('send', () => {
  it('sends count sample events of the trigger, each with its own id, with the credentials, and exits 0', async () => {
    expect(await send('message_sent', options({ count: 3, user: 'app', password: 'pw' }))).toBe(EXIT_OK);
    expect(received).toHaveLength(3);
    expect(received.map((r) => r.event.trigger)).toEqual(['message_sent', 'message_sent', 'message_sent']);
    expect(new Set(received.map((r) => message(r.event).id)).size).toBe(3);
    expect(received[0]!.authorization).toBe(`Basic ${Buffer.from('app:pw').toString('base64')}`);
  });

  it('exits 1 when the receiver does not answer 2xx', async () => {
    answerStatus = 500;
    expect(await send('message_sent', options())).toBe(EXIT_FAILED);
    expect(received).toHaveLength(1);
  });

  it('applies --add before --set, so a --set changes what an --add made', async () => {
    await send('message_sent', options({ add: collectAddition('data.message.extra=added'), set: collectOverride('data.message.extra=set') }));
    expect(message(received[0]!.event).extra).toBe('set');
  });

  it('refuses before sending: no trigger and no file; an unknown trigger (with a suggestion); an event the receiver would refuse', async () => {
    expect(await usage(send(undefined, options()))).toBe('Name a trigger (like message_sent), or give --file or --raw.');
    expect(await usage(send('message_snet', options()))).toMatch(/^Unknown trigger "message_snet"\..*message_sent.*--allow-unknown or give --file\.$/s);
    const invalid = await usage(send('message_sent', options({ set: collectOverride('data.message=null') })));
    expect(invalid).toMatch(/^The event would be refused \(invalid_payload\):\n {2}\S.*\nFix it, or send it anyway with --no-validate\.$/s);
    expect(received).toEqual([]);
  });

  it('--no-validate sends the event the receiver would refuse; --allow-unknown sends an unknown trigger', async () => {
    await send('message_sent', options({ validate: false, set: collectOverride('data.message=null') }));
    await send('poll_closed', options({ allowUnknown: true }));
    expect(received.map((r) => r.event.trigger)).toEqual(['message_sent', 'poll_closed']);
    expect((received[0]!.event.data as { message: unknown }).message).toBeNull();
  });

  it('--file sends the event as it is, count times (the same ids: repeats)', async () => {
    const event = { trigger: 'group_deleted', appId: 'app', data: { group: { guid: 'g-file' } } };
    const path = join(dir, 'event.json');
    writeFileSync(path, JSON.stringify(event));
    expect(await send(undefined, options({ file: path, count: 2, validate: false }))).toBe(EXIT_OK);
    expect(await send('group_deleted', options({ file: path, validate: false }))).toBe(EXIT_OK);
    expect(received.map((r) => r.event)).toEqual([event, event, event]);
  });

  it('refuses a file that cannot be read, is not JSON, is not one object, or holds another trigger', async () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    expect(await usage(send(undefined, options({ file: join(dir, 'missing.json') })))).toBe(`Cannot read ${join(dir, 'missing.json')}: ENOENT.`);
    expect(await usage(send(undefined, options({ file: write('bad.json', '{nope') })))).toMatch(new RegExp(`^${join(dir, 'bad.json')} is not JSON: .+\\.$`));
    for (const text of ['[1]', 'null', '"text"']) {
      expect(await usage(send(undefined, options({ file: write('list.json', text) })))).toBe(`${join(dir, 'list.json')} must hold one JSON object (an event).`);
    }
    const other = write('other.json', JSON.stringify({ trigger: 'group_deleted', data: {} }));
    expect(await usage(send('message_sent', options({ file: other })))).toBe(`${other} holds a "group_deleted" event, not "message_sent".`);
    expect(received).toEqual([]);
  });

  it('the command line: its options reach send (repeatable --set/--add, --count, --no-validate, --file), the exit code set', async () => {
    const run = async (...args: string[]) => {
      process.exitCode = undefined;
      await sendCommand().exitOverride().configureOutput({ writeErr: () => undefined }).parseAsync(args, { from: 'user' });
      const code = process.exitCode;
      process.exitCode = undefined;
      return code;
    };
    expect(await run('message_sent', '--url', url, '--count', '2', '--concurrency', '2', '--quiet', '--no-progress', '--add', 'data.message.a=1', '--set', 'data.message.a=2', '--user', 'u', '--password', 'p')).toBe(EXIT_OK);
    expect(received).toHaveLength(2);
    expect(received.map((r) => message(r.event).a)).toEqual([2, 2]);
    expect(received[0]!.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(await run('message_sent', '--url', url, '--quiet', '--no-validate', '--set', 'data.message=null')).toBe(EXIT_OK);
    expect(await run('poll_closed', '--url', url, '--quiet', '--allow-unknown', '--json')).toBe(EXIT_OK);
    const path = join(dir, 'cmd.json');
    writeFileSync(path, JSON.stringify({ trigger: 'group_deleted', data: {} }));
    expect(await run('--file', path, '--url', url, '--quiet', '--no-validate')).toBe(EXIT_OK);
    expect(received.map((r) => r.event.trigger)).toEqual(['message_sent', 'message_sent', 'message_sent', 'poll_closed', 'group_deleted']);
    answerStatus = 500;
    expect(await run('message_sent', '--url', url, '--quiet')).toBe(EXIT_FAILED);
    await expect(run('message_sent', '--url', 'ftp://x', '--quiet')).rejects.toThrow(/URL/);
    await expect(run('message_sent', '--url', url, '--count', '0')).rejects.toThrow(/whole number of 1 or more/);
  });

  it('event i of a run is sample number i (ids and times in order)', async () => {
    await send('poll_closed', options({ allowUnknown: true, count: 3 }));
    expect(received.map((r) => String((r.event.data as { id: string }).id).split('-').pop())).toEqual(['0', '1', '2']);
  });

  it('prints a line per event and a summary, only the summary with quiet, JSON lines with json, no progress bar when quiet', async () => {
    await send('message_sent', options({ count: 2, quiet: false, progress: undefined }));
    const plain = lines();
    expect(plain.length).toBeGreaterThanOrEqual(3);
    expect(() => JSON.parse(plain[0]!)).toThrow();
    stdout = [];
    await send('message_sent', options({ count: 2, quiet: true, progress: undefined }));
    expect(lines()).toHaveLength(plain.length - 2);
    stdout = [];
    await send('message_sent', options({ count: 2, quiet: false, json: true }));
    const json = lines();
    expect(json).toHaveLength(plain.length);
    for (const line of json) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr.join('')).toBe('');
    await send('message_sent', options({ count: 2, quiet: false, progress: true }));
    expect(stderr.join('')).not.toBe(''); // --progress shows the bar on a stderr that is not a terminal
  });

  it('lists every issue of an event it refuses, one per line', async () => {
    const refused = await usage(send('message_sent', options({ set: collectOverride('data.message={}') })));
    const issueLines = refused.split('\n').slice(1, -1);
    expect(issueLines.length).toBeGreaterThanOrEqual(2);
    expect(issueLines[0]).toMatch(/^ {2}data\.message\.id: /);
    for (const line of issueLines) expect(line).toMatch(/^ {2}\S/);
  });

  it('the command: named send, every option and the argument described, examples in the help', () => {
    const command = sendCommand();
    expect(command.name()).toBe('send');
    expect(command.description()).toMatch(/^Post realistic events/);
    expect(command.registeredArguments.map((argument) => argument.description)).toEqual([expect.stringMatching(/^trigger id/)]);
    expect(command.options.length).toBeGreaterThanOrEqual(13);
    for (const option of command.options) expect(option.description, option.flags).toMatch(/\w{3}/);
    let help = '';
    command.configureOutput({ writeOut: (text) => void (help += text) }).outputHelp();
    expect(help).toContain('Examples:\n  $ chat-webhooks send message_sent --url http://localhost:3000/webhooks\n');
    expect(help).toContain('$ chat-webhooks send --file event.json --url http://localhost:3000/webhooks');
  });

  it('--raw sends the file\'s bytes unchanged, malformed JSON and a BOM included, with the platform\'s headers', async () => {
    const path = join(dir, 'broken.json');
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"trigger":"message_sent", "data": {\r\n  "message": '), Buffer.from([0xff])]);
    writeFileSync(path, bytes);
    expect(await send(undefined, options({ raw: path, count: 2, quiet: false }))).toBe(EXIT_OK);
    expect(received).toHaveLength(2);
    for (const { bytes: got, contentType } of received) {
      expect(got.equals(bytes)).toBe(true);
      expect(contentType).toBe('Application/json');
    }
    expect(lines()[0]).toMatch(/^200 .* #1 raw 55 bytes, not JSON$/);
    const named = join(dir, 'named.json');
    writeFileSync(named, '{"trigger":"message_sent","data":{}}');
    expect(await send(undefined, options({ raw: named }))).toBe(EXIT_OK);
    expect(received[2]!.bytes.toString()).toBe('{"trigger":"message_sent","data":{}}');
  });

  it('--raw takes no trigger, --file, --set or --add (they would change what it sends)', async () => {
    const path = join(dir, 'raw.json');
    writeFileSync(path, '{}');
    expect(await usage(send('message_sent', options({ raw: path })))).toBe("--raw sends the file's bytes unchanged: it does not take a trigger.");
    expect(await usage(send(undefined, options({ raw: path, set: collectOverride('a=1') })))).toContain('does not take --set');
    expect(await usage(send(undefined, options({ raw: join(dir, 'missing.json') })))).toBe(`Cannot read ${join(dir, 'missing.json')}: ENOENT.`);
    expect(received).toEqual([]);
  });

  it('a 401 to a send without --user hints at the flags; with credentials (or another status) no hint', async () => {
    answerStatus = 401;
    expect(await send('message_sent', options())).toBe(EXIT_FAILED);
    expect(stderr.join('')).toBe(
      'Hint: the receiver answered 401 (it wants Basic auth) and no credentials were sent: give --user and --password (or CHAT_WEBHOOKS_USER and CHAT_WEBHOOKS_PASSWORD).\n',
    );
    stderr = [];
    expect(await send('message_sent', options({ user: 'app', password: 'wrong' }))).toBe(EXIT_FAILED);
    answerStatus = 403;
    expect(await send('message_sent', options())).toBe(EXIT_FAILED);
    expect(stderr.join('')).toBe('');
  });
});
