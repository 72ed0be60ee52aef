/**
 * The API key, the management key and secret never show: not in an error's message, `toString()`,
 * `util.inspect`, JSON, cause or body (the local platform echoes the key it was given, as real services
 * do), nor in a log line.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiLogger, createChatClient, createManagementClient } from '../../src/api/index.js';
import { type Platform, startPlatform } from './platform-server.js';

const apiKey = 'sk-live-5e1f0c2d9a7b4e61';
const key = 'mk-77aa0e41c3';
const secret = 'ms-0f9e8d7c6b5a4321';

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform({ appId: 'app', apiKey: 'the-right-key', key: 'right', secret: 'right', users: {} });
});
afterAll(() => platform.close());

/** Every way an error or a log line can be turned into text. */
function renderings(error: unknown, lines: string[]): string[] {
  const e = error as Error & { body?: unknown; cause?: unknown };
  return [
    e.message,
    String(e),
    e.stack ?? '',
    inspect(e, { depth: 20, showHidden: true }),
    JSON.stringify(e),
    JSON.stringify(e.body ?? null),
    inspect(e.cause, { depth: 20, showHidden: true }),
    ...lines,
  ];
}

function recordingLogger(): { logger: ApiLogger; lines: string[] } {
  const lines: string[] = [];
  const log = (fields: Record<string, unknown>, message?: string) => void lines.push(`${message} ${JSON.stringify(fields)} ${inspect(fields)}`);
  return { logger: { debug: log, warn: log }, lines };
}

const settle = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('should have failed'), (error: unknown) => error);

describe('secrets stay out of errors and logs', () => {
  it('chat client: a 401 whose body echoes the key, after retries that were logged', async () => {
    const { logger, lines } = recordingLogger();
    platform.plan({ status: 503, headers: { 'retry-after': '0' } });
    const client = createChatClient({ apiKey, baseUrl: `${platform.url}/v3`, logger, retry: { retries: 1, minDelayMs: 1 } });
    const error = await settle(client.users.list());
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify((error as { body: unknown }).body)).toContain('[redacted]'); // the echo was there
    for (const text of renderings(error, lines)) expect(text).not.toContain(apiKey);
  });

  it('management client: key and secret echoed in the body', async () => {
    const { logger, lines } = recordingLogger();
    platform.plan({ status: 429, headers: { 'retry-after': '0' } });
    const client = createManagementClient({ key, secret, baseUrl: platform.url, logger, retry: { retries: 1 } });
    const error = await settle(client.apps.create({ name: 'n', region: 'us' }));
    expect((error as { status: number }).status).toBe(401);
    for (const text of renderings(error, lines)) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(secret);
    }
  });

  it('a custom fetch whose own error carries the request headers', async () => {
    const leaky: typeof fetch = async (_url, init) => {
      const failure = new TypeError(`connect failed with headers ${JSON.stringify(init?.headers)}`);
      Object.assign(failure, { headers: init?.headers, cause: new Error(`nested ${apiKey}`) });
      throw failure;
    };
    const client = createChatClient({ apiKey, appId: 'app', region: 'us', fetch: leaky, retry: 0 });
    const error = await settle(client.users.list());
    expect((error as { code: string }).code).toBe('network');
    for (const text of renderings(error, [])) expect(text).not.toContain(apiKey);
  });

  it('a timeout, an abort and a network failure', async () => {
    const client = createChatClient({ apiKey, baseUrl: 'http://127.0.0.1:2/v3', retry: 0, timeoutMs: 100 });
    const failures = [await settle(client.users.list())];
    platform.plan({ delayMs: 500 });
    failures.push(await settle(createChatClient({ apiKey, baseUrl: platform.url, retry: 0, timeoutMs: 100 }).users.list()));
    failures.push(await settle(client.users.list({}, { signal: AbortSignal.abort() })));
    expect(failures.map((error) => (error as { code: string }).code)).toEqual(['network', 'timeout', 'aborted']);
    for (const error of failures) for (const text of renderings(error, [])) expect(text).not.toContain(apiKey);
  });

  it('the client object itself does not show the key', () => {
    const client = createChatClient({ apiKey, appId: 'app', region: 'us' });
    expect(inspect(client, { depth: 20, showHidden: true })).not.toContain(apiKey);
    expect(JSON.stringify(client)).not.toContain(apiKey);
  });
});
