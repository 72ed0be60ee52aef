/**
 * `listen` in-process (src/cli/listen.ts): the real server on a free port, real requests over loopback, stopped
 * the way a shell stops it (SIGINT/SIGTERM, emitted on this process). send-listen.test.ts and live-page.test.ts
 * run the built CLI as a child process; this file reaches the code a mutation run changes: what each delivery
 * is recorded and printed as, what a forward carries, the banner, the live page's wiring, the listening errors.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CliError, EXIT_FAILED, EXIT_OK } from '../../src/cli/errors.js';
import { listen, listenCommand } from '../../src/cli/listen.js';
import { rawRequest, startDeveloperApp, type DeveloperApp, type Received } from '../support/developer-app.js';

type Options = Parameters<typeof listen>[0];
type Recorded = Record<string, unknown> & { seq: number; status: number; rawBody: string };

const AUTH = `Basic ${Buffer.from('app:pw').toString('base64')}`;
const groupDeleted = (guid: string) => JSON.stringify({ trigger: 'group_deleted', data: { group: { guid } } });

let stdout: string[] = [];
let stderr: string[] = [];
const out = () => stdout.join('');
const err = () => stderr.join('');
const records = () =>
  out()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Recorded);

beforeEach(() => {
  stdout = [];
  stderr = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (stderr.push(String(chunk)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  // listen waits for either signal; the one not sent stays registered (a CLI exits right after).
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
});

async function until<T>(what: () => T | undefined | false, label: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = what();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}; stdout:\n${out()}\nstderr:\n${err()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Running {
  port: number;
  url: string;
  done: Promise<number>;
  stop(signal?: 'SIGINT' | 'SIGTERM'): Promise<number>;
}

/** Starts `listen` on a free port and resolves once its banner names the port. */
async function start(options: Partial<Options> = {}, run: () => Promise<unknown> = () => listen({ port: 0, host: '127.0.0.1', ...options })): Promise<Running> {
  const done = run().then(() => EXIT_OK) as Promise<number>;
  done.catch(() => undefined);
  const port = await until(() => /Listening on http:\/\/[^ ]*:(\d+)\//.exec(err())?.[1], 'the banner');
  return {
    port: Number(port),
    url: `http://127.0.0.1:${port}/`,
    done,
    async stop(signal = 'SIGINT') {
      process.emit(signal as 'SIGINT');
      return done;
    },
  };
}

/** The developer's own app behind `--forward`. */
let app: DeveloperApp;
let appUrl: string;
let forwarded: Received[] = [];
beforeAll(async () => {
  app = await startDeveloperApp();
  appUrl = app.url;
});
afterAll(() => app.close());
beforeEach(() => {
  forwarded = app.received;
  forwarded.length = 0;
});

/** A request with exactly the headers given; a stream of /events is cut at its first delivery. */
const raw = (port: number, path: string, headers: Record<string, string>, method = 'GET', body?: string) =>
  rawRequest(port, path, headers, method, body, 'event: delivery');

describe('listen --json', () => {
  it('records each delivery as one JSON line, answers as the receiver does, forwards accepted ones with three headers', async () => {
    const running = await start({ json: true, user: 'app', password: 'pw', forward: appUrl });
    expect(err()).toBe(
      `Listening on ${running.url} (Basic auth required, forwarding to ${appUrl}).\n` +
        `POST webhooks to any path; live page at ${running.url}. Ctrl-C to stop.\n` +
        `For the platform to reach it, expose the port with a tunnel: cloudflared tunnel --url http://localhost:${running.port}\n`,
    );
    const headers = { host: 'abc.trycloudflare.com', 'content-type': 'Application/json', authorization: AUTH, 'user-agent': 'platform/1', 'x-extra': 'kept here, not forwarded' };
    const body = groupDeleted('g-1');
    expect((await raw(running.port, '/hooks?x=1', headers, 'POST', body)).status).toBe(200);
    await until(() => records().length === 1, 'the first record');
    expect((await raw(running.port, '/hooks?x=1', headers, 'POST', body)).status).toBe(200);
    await until(() => records().length === 2, 'the second record');
    const refused = await raw(running.port, '/hooks', { ...headers, authorization: 'Basic d3Jvbmc6cHc=' }, 'POST', body);
    expect(refused.status).toBe(401);
    const [first, repeat, unauthorized] = await until(() => records().length === 3 && records(), 'three records');
    expect(first).toMatchObject({ method: 'POST', path: '/hooks?x=1', status: 200, verdict: 'valid', trigger: 'group_deleted', duplicate: false, rawBody: body });
    expect(first!.headers).toEqual({ ...headers, authorization: 'Basic ••••••', 'content-length': String(body.length), connection: 'keep-alive' });
    expect(first!.forward).toMatchObject({ url: appUrl, status: 204 });
    expect(repeat).toMatchObject({ status: 200, duplicate: true, key: first!.key });
    // A refusal is recorded with the receiver's own answer and not forwarded.
    expect(unauthorized).toMatchObject({ status: 401, verdict: 'refused', code: 'unauthorized', answer: refused.body });
    expect(refused.body).not.toBe('');
    expect(unauthorized!.forward).toBeUndefined();
    expect(forwarded).toHaveLength(2);
    expect(forwarded[0]!.body).toBe(body);
    const { host, connection, 'content-length': length, ...rest } = forwarded[0]!.headers;
    expect([host, connection, length]).toEqual([new URL(appUrl).host, 'keep-alive', String(body.length)]);
    // Only what the app's receiver checks: no x-extra, no other header of the delivery.
    expect(rest).toEqual({ 'content-type': 'Application/json', authorization: AUTH, 'user-agent': 'platform/1', accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'accept-encoding': 'gzip, deflate' });
    // Nothing but the banner on stderr: the package's own log would repeat the refusal.
    expect(err().split('\n')).toHaveLength(4);
    expect(await running.stop()).toBe(EXIT_OK);
  });

  it('keeps a body that came in many chunks whole, and of an oversized one at most the receiver limit, as sent', async () => {
    const running = await start({ json: true });
    const long = JSON.stringify({ trigger: 'group_deleted', data: { group: { guid: 'long' }, pad: 'é'.repeat(150_000) } });
    expect((await fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: long })).status).toBe(200);
    const huge = 'x'.repeat(3 * 1024 * 1024);
    const answer = await raw(running.port, '/', { 'content-type': 'application/json', 'content-length': String(huge.length) }, 'POST', huge).catch(() => undefined);
    expect(answer?.status ?? 413).toBe(413);
    const [whole, cut] = await until(() => records().length === 2 && records(), 'two records');
    expect(whole!.rawBody).toBe(long);
    expect(cut!.status).toBe(413);
    expect(cut!.rawBody.length).toBeLessThanOrEqual(1024 * 1024);
    expect(huge.startsWith(cut!.rawBody)).toBe(true);
    expect(await running.stop()).toBe(EXIT_OK);
  });
});

describe('listen, readable', () => {
  it('prints each delivery as lines, forwards without credentials it did not get, and stops on SIGTERM', async () => {
    const running = await start({ forward: appUrl });
    expect(err()).toContain(`Listening on ${running.url} (Basic auth off, forwarding to ${appUrl}).\n`);
    const body = groupDeleted('g-2');
    expect((await raw(running.port, '/', { 'content-type': 'application/json' }, 'POST', body)).status).toBe(200);
    await until(() => out().includes('→'), 'the first delivery printed');
    expect((await raw(running.port, '/', { 'content-type': 'text/plain' }, 'POST', body)).status).toBe(415);
    await until(() => out().includes('415'), 'the second delivery printed');
    expect((await raw(running.port, '/', { 'content-type': 'application/json' }, 'PUT', body)).status).toBe(405);
    const text = await until(() => out().includes('405') && out(), 'three deliveries printed');
    expect(text).toMatch(/^\d\d:\d\d:\d\d 200 group_deleted ✓ valid\n/);
    expect(text).toMatch(/\n {4}key \S+ · first delivery\n {4}→ http:\/\/127\.0\.0\.1:\d+\/hooks 204 \d+ ms\n/);
    expect(text).toMatch(/\n\d\d:\d\d:\d\d 415 group_deleted ✗ refused: unsupported_media_type\n {4}group=g-2\n {4}answer: Webhook deliveries are JSON/);
    expect(text).toMatch(/\n\d\d:\d\d:\d\d 405 group_deleted ✗ refused: method_not_allowed\n/);
    expect(text).not.toContain('{"seq"');
    await until(() => forwarded.length === 1, 'the forward');
    // Headers the delivery did not have are not made up (no "undefined" Authorization or User-Agent).
    expect(forwarded[0]!.headers.authorization).toBeUndefined();
    expect(forwarded[0]!.headers['user-agent']).toBe('node');
    expect(forwarded[0]!.headers['content-type']).toBe('application/json');
    expect(await running.stop('SIGTERM')).toBe(EXIT_OK);
  });

  it('stops listening when stopped: the port refuses connections and live feeds end', async () => {
    const running = await start();
    const host = `127.0.0.1:${running.port}`;
    const feedEnded = new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: running.port, path: '/events', headers: { host } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      });
      req.on('error', reject).end();
    });
    await until(() => err().includes('Listening'), 'listening');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await running.stop()).toBe(EXIT_OK);
    expect(await feedEnded).toContain('event: hello');
    await expect(fetch(running.url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});

describe('listen --events', () => {
  it('shows only the triggers named (blanks dropped), and deliveries with no trigger; notes names it does not know', async () => {
    const command = listenCommand().exitOverride();
    const running = await start({}, () => command.parseAsync(['--port', '0', '--json', '--events', ' user_blocked, ,group_creatd,message_sent'], { from: 'user' }));
    expect(err()).toContain('Note: --events names "group_creatd", which is not a known trigger. Did you mean "group_created"');
    expect(err().match(/Note:/g)).toHaveLength(1);
    expect(err()).toContain('(Basic auth off, showing only user_blocked, group_creatd, message_sent).');
    const post = (body: string) => fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect((await post(groupDeleted('hidden'))).status).toBe(200);
    expect((await post(JSON.stringify({ trigger: 'user_blocked', data: {} }))).status).toBe(200);
    expect((await post('{')).status).toBe(400);
    await until(() => records().length === 2, 'two records');
    expect((await fetch(running.url, { method: 'PUT', body: '{' })).status).toBe(405);
    const shown = await until(() => records().length === 3 && records(), 'three records');
    expect(shown.map((record) => [record.method, record.trigger, record.status])).toEqual([
      ['POST', 'user_blocked', 200],
      ['POST', undefined, 400],
      ['PUT', undefined, 405],
    ]);
    // The hidden one was still recorded (its sequence number is taken).
    expect(shown.map((record) => record.seq)).toEqual([2, 3, 4]);
    expect(await running.stop()).toBe(EXIT_OK);
    expect(process.exitCode).toBe(EXIT_OK);
  });
});

describe('the live page', () => {
  it('answers its own host with the page (user and forward in its config), resends to the forward target, 421 elsewhere', async () => {
    const running = await start({ user: 'app', password: 'pw', forward: appUrl });
    const host = `127.0.0.1:${running.port}`;
    const body = groupDeleted('page');
    expect((await raw(running.port, '/', { 'content-type': 'application/json', authorization: AUTH, 'x-extra': 'no' }, 'POST', body)).status).toBe(200);
    await until(() => forwarded.length === 1, 'the forward');
    const page = await raw(running.port, '/', { host });
    expect(page.status).toBe(200);
    const config = JSON.parse(/<script type="application\/json" id="config">(.*?)<\/script>/s.exec(page.body)![1]!) as Record<string, unknown>;
    expect(config).toMatchObject({ user: 'app', forward: appUrl, records: [expect.objectContaining({ seq: 1, rawBody: body })] });
    const feed = await raw(running.port, '/events', { host });
    expect(feed.body).toContain(`"rawBody":${JSON.stringify(body)}`);
    expect((await raw(running.port, '/', { host: `localhost:${running.port}` })).status).toBe(200);
    expect((await raw(running.port, '/', { host: 'evil.example' })).status).toBe(421);
    // Resend: the same body with the headers the forward kept (the delivery's Authorization, no x-extra).
    const resent = await raw(running.port, '/_listen/resend/1', { host, origin: `http://${host}` }, 'POST');
    expect(resent.status).toBe(200);
    expect(JSON.parse(resent.body)).toMatchObject({ url: appUrl, status: 204 });
    expect(forwarded).toHaveLength(2);
    expect(forwarded[1]!.body).toBe(body);
    expect(forwarded[1]!.headers.authorization).toBe(AUTH);
    expect(forwarded[1]!.headers['x-extra']).toBeUndefined();
    expect(out()).toMatch(/\n {4}↻ #1 resent to http:\/\/127\.0\.0\.1:\d+\/hooks 204 \d+ ms\n/);
    expect((await raw(running.port, '/_listen/resend/7', { host, origin: `http://${host}` }, 'POST')).status).toBe(410);
    expect(await running.stop()).toBe(EXIT_OK);
  });

  it('without credentials or --forward, the page has neither; resend has nowhere to go', async () => {
    const running = await start();
    const host = `127.0.0.1:${running.port}`;
    const page = await raw(running.port, '/', { host });
    const config = JSON.parse(/<script type="application\/json" id="config">(.*?)<\/script>/s.exec(page.body)![1]!) as Record<string, unknown>;
    expect(Object.keys(config).sort()).toEqual(['instance', 'records']);
    expect((await raw(running.port, '/_listen/resend/1', { host, origin: `http://${host}` }, 'POST')).status).toBe(404);
    expect(await running.stop()).toBe(EXIT_OK);
  });
});

describe('the banner', () => {
  it('names an IPv6 address in brackets, and the page at localhost when listening on every interface', async () => {
    for (const [host, base, page] of [
      ['::1', 'http://[::1]:PORT/', 'http://[::1]:PORT/'],
      ['0.0.0.0', 'http://0.0.0.0:PORT/', 'http://localhost:PORT/'],
      ['::', 'http://[::]:PORT/', 'http://localhost:PORT/'],
    ] as const) {
      stderr = [];
      const running = await start({ host });
      const port = String(running.port);
      expect(err(), host).toContain(`Listening on ${base.replace('PORT', port)} (Basic auth off).\nPOST webhooks to any path; live page at ${page.replace('PORT', port)}. Ctrl-C`);
      expect(await running.stop()).toBe(EXIT_OK);
    }
  });
});

describe('when it cannot listen', () => {
  async function refusal(options: Partial<Options>): Promise<unknown> {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const error = await listen({ port: 0, host: '127.0.0.1', ...options }).then(
      () => expect.unreachable('should have failed'),
      (reason: unknown) => reason,
    );
    // The receiver it had built is closed again: no timer of its left to keep the process alive.
    expect(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length).toBeLessThanOrEqual(before);
    expect(process.listenerCount('SIGINT')).toBe(0);
    return error;
  }

  it('says why in one line, exit 1: a busy port, an address not on this machine, a host name that does not resolve', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const cases: [Partial<Options>, string][] = [
        [{ port }, `Port ${port} is already in use; pick another with --port.`],
        [{ host: '192.0.2.1' }, 'Cannot listen on host 192.0.2.1.'],
        [{ host: 'no-such-host.invalid' }, 'Cannot listen on host no-such-host.invalid.'],
      ];
      for (const [options, message] of cases) {
        const error = await refusal(options);
        expect(error).toBeInstanceOf(CliError);
        expect((error as CliError).message).toBe(message);
        expect((error as CliError).exitCode).toBe(EXIT_FAILED);
      }
    } finally {
      busy.close();
    }
  });

  it('passes any other error on as it is', async () => {
    const error = await refusal({ port: 70_000 });
    expect(error).toBeInstanceOf(RangeError);
    expect((error as { code?: string }).code).toBe('ERR_SOCKET_BAD_PORT');
  });
});

describe('the command', () => {
  it('is named listen, on 127.0.0.1:3000 unless told, every option described, with the tunnel and examples in its help', () => {
    const command = listenCommand();
    expect(command.name()).toBe('listen');
    expect(command.description()).toMatch(/^Receive webhooks locally: print each delivery/);
    const option = (long: string) => command.options.find((candidate) => candidate.long === long);
    expect(option('--port')?.defaultValue).toBe(3000);
    expect(option('--host')?.defaultValue).toBe('127.0.0.1');
    expect(command.options.map((candidate) => candidate.long).sort()).toEqual(['--events', '--forward', '--host', '--json', '--password', '--port', '--user']);
    for (const candidate of command.options) expect(candidate.description, candidate.flags).toMatch(/\w{3}/);
    let help = '';
    command.configureOutput({ writeOut: (text) => void (help += text) }).outputHelp();
    expect(help).toContain('Reaching it from the platform:\n');
    expect(help).toContain('$ cloudflared tunnel --url http://localhost:3000');
    expect(help).toContain('$ chat-webhooks listen --json > captured.ndjson');
  });

  it('refuses a --forward that is no http URL', () => {
    const command = listenCommand().exitOverride().configureOutput({ writeErr: () => undefined });
    expect(() => command.parse(['--forward', 'ftp://x'], { from: 'user' })).toThrow(/http or https/);
  });
});
