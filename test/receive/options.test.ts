/**
 * createWebhooks' options (src/receive/options.ts): each check's boundary, the option it names, and each
 * default's effect (found by mutation testing, tools/mutation/results.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, memoryInbox, type WebhookError, type WebhooksOptions } from '../../src/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { rejectUnknownOptions } from '../../src/dispatch/unknown-options.js';
import type { Inbox } from '../../src/delivery/port.js';

const auth = { username: 'platform', password: 's3cret' };
const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const request = (text: string) => buildRequest(text, { auth });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ConfigurationError `createWebhooks(options)` throws: its option and message. */
function refusal(options: unknown): { option: string; message: string } {
  try {
    createWebhooks(options as WebhooksOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    const { option, message } = error as ConfigurationError;
    return { option, message };
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

const accepts = (options: Partial<WebhooksOptions>) => expect(() => createWebhooks({ auth, logger: {}, ...options })).not.toThrow();

describe('option checks', () => {
  it('needs an options object and auth', () => {
    expect(refusal(null)).toEqual({ option: 'options', message: expect.stringMatching(/^createWebhooks needs an options object/) });
    expect(refusal('x')).toMatchObject({ option: 'options' });
    expect(refusal({})).toEqual({ option: 'auth', message: expect.stringMatching(/^createWebhooks needs `auth`.*`auth: false`/) });
    accepts({ auth: false });
  });

  it('maxBodyBytes: a positive whole number', () => {
    for (const wrong of [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '100']) {
      expect(refusal({ auth, maxBodyBytes: wrong })).toEqual({
        option: 'maxBodyBytes',
        message: '`maxBodyBytes` must be a positive whole number of bytes.',
      });
    }
    accepts({ maxBodyBytes: 1 });
    expect(createWebhooks({ auth, maxBodyBytes: 1 }).maxBodyBytes).toBe(1);
    expect(createWebhooks({ auth }).maxBodyBytes).toBe(1024 * 1024);
  });

  it('handlerTimeoutMs: 0 or more (0 and Infinity mean none)', () => {
    for (const wrong of [-1, -0.5, Number.NaN]) {
      expect(refusal({ auth, handlerTimeoutMs: wrong })).toEqual({
        option: 'handlerTimeoutMs',
        message: '`handlerTimeoutMs` must be 0 (no limit) or a positive number.',
      });
    }
    accepts({ handlerTimeoutMs: 0 });
    accepts({ handlerTimeoutMs: Infinity });
  });

  it('bodyTimeoutMs: 0 or more', () => {
    for (const wrong of [-1, Number.NaN]) {
      expect(refusal({ auth, bodyTimeoutMs: wrong })).toEqual({
        option: 'bodyTimeoutMs',
        message: '`bodyTimeoutMs` must be 0 (no limit) or a positive number of milliseconds.',
      });
    }
    accepts({ bodyTimeoutMs: 0 });
  });

  it("invalidPayload: 'accept' or 'reject'", () => {
    expect(refusal({ auth, invalidPayload: 'drop' })).toEqual({
      option: 'invalidPayload',
      message: "`invalidPayload` must be 'accept' or 'reject'.",
    });
    accepts({ invalidPayload: 'accept' });
    accepts({ invalidPayload: 'reject' });
  });

  it('logLevel: one of the levels', () => {
    expect(refusal({ auth, logLevel: 'trace' })).toMatchObject({ option: 'logLevel' });
    for (const level of ['debug', 'info', 'warn', 'error', 'silent'] as const) accepts({ logLevel: level });
  });

  it('dedupe: maxKeys a whole number from 1 to 2^24, windowMs positive', () => {
    for (const wrong of [0, -1, 1.5, 2 ** 24 + 1]) {
      expect(refusal({ auth, dedupe: { maxKeys: wrong } })).toEqual({
        option: 'dedupe.maxKeys',
        message: `\`dedupe.maxKeys\` must be a whole number from 1 to ${2 ** 24}.`,
      });
    }
    accepts({ dedupe: { maxKeys: 1 } });
    accepts({ dedupe: { maxKeys: 2 ** 24 } });
    for (const wrong of [0, -5, Number.NaN]) {
      expect(refusal({ auth, dedupe: { windowMs: wrong } })).toEqual({
        option: 'dedupe.windowMs',
        message: '`dedupe.windowMs` must be a positive number of milliseconds.',
      });
    }
    accepts({ dedupe: { windowMs: 1 } });
    accepts({ dedupe: true as never });
  });

  it('inbox: an Inbox; commitTimeoutMs positive; idempotencyKeys entries functions', () => {
    const message = '`inbox` must be an Inbox: memoryInbox(), sqliteInbox({ path }), redisInbox({ url }) or postgresInbox({ connectionString }).';
    expect(refusal({ auth, inbox: null })).toEqual({ option: 'inbox', message });
    expect(refusal({ auth, inbox: {} })).toEqual({ option: 'inbox', message });
    expect(refusal({ auth, inbox: { put: () => undefined } })).toEqual({ option: 'inbox', message });
    expect(refusal({ auth, inbox: { claim: () => undefined } })).toEqual({ option: 'inbox', message });
    for (const wrong of [0, -1, Number.NaN]) {
      expect(refusal({ auth, commitTimeoutMs: wrong })).toEqual({
        option: 'commitTimeoutMs',
        message: '`commitTimeoutMs` must be a positive number of milliseconds.',
      });
    }
    accepts({ commitTimeoutMs: 1 });
    expect(refusal({ auth, idempotencyKeys: { message_sent: 'data.message.id' } })).toEqual({
      option: 'idempotencyKeys.message_sent',
      message: 'Each `idempotencyKeys` entry must be a function (event) => string.',
    });
    accepts({ idempotencyKeys: { message_sent: (event) => String(event.data.message.id) } });
  });

  it('rejectUnknownOptions ignores a missing options object and names the unknown key', () => {
    expect(() => rejectUnknownOptions('x', undefined, ['a'])).not.toThrow();
    expect(() => rejectUnknownOptions('x', null, ['a'])).not.toThrow();
    expect(() => rejectUnknownOptions('x', { a: 1 }, ['a'])).not.toThrow();
    expect(() => rejectUnknownOptions('x', { a: 1, zzzz: 2 }, ['a', 'bc'])).toThrowError(
      expect.objectContaining({ option: 'zzzz', message: 'Unknown option "zzzz" for x. Known options: a, bc.' }),
    );
  });
});

describe('option effects', () => {
  it('dedupe: false runs the handlers for every repeat', async () => {
    const webhooks = createWebhooks({ auth, logger: {}, dedupe: false });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    await (await webhooks.handle(request(body))).done;
    await (await webhooks.handle(request(body))).done;
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('dedupe options are used: a window of one key forgets the first after another', async () => {
    const webhooks = createWebhooks({ auth, logger: {}, dedupe: { maxKeys: 1 } });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    const other = JSON.stringify({ ...JSON.parse(body), data: { ...JSON.parse(body).data, message: { ...JSON.parse(body).data.message, id: 'other' } } });
    for (const text of [body, other, body]) await (await webhooks.handle(request(text))).done;
    expect(handler).toHaveBeenCalledTimes(3);
  });

  it('with an inbox, the inbox decides repeats, not the memory window', async () => {
    const puts: string[] = [];
    const inner = memoryInbox();
    const inbox: Inbox = new Proxy(inner, {
      get: (target, name) => {
        if (name === 'put') return (entry: Parameters<Inbox['put']>[0]) => (puts.push(entry.key), target.put(entry));
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false });
    await webhooks.handle(request(body));
    await webhooks.handle(request(body));
    expect(puts).toHaveLength(2);
    await webhooks.close({ timeoutMs: 10 });
  });

  it('consume: false only receives; by default an in-process worker runs the handlers', async () => {
    const handler = vi.fn();
    const receiving = createWebhooks({ auth, logger: {}, inbox: memoryInbox(), consume: false });
    receiving.on('message_sent', handler);
    expect((await receiving.handle(request(body))).status).toBe(200);
    await sleep(50);
    expect(handler).not.toHaveBeenCalled();
    await receiving.close({ timeoutMs: 10 });

    const consuming = createWebhooks({ auth, logger: {}, inbox: memoryInbox(), worker: { concurrency: 1 } });
    consuming.on('message_sent', handler);
    await consuming.handle(request(body));
    for (let i = 0; i < 100 && handler.mock.calls.length === 0; i++) await sleep(10);
    expect(handler).toHaveBeenCalledTimes(1);
    await consuming.close({ timeoutMs: 100 });
  });

  it('worker options reach the in-process worker, checked at creation', () => {
    expect(refusal({ auth, inbox: memoryInbox(), worker: { concurrency: 0 } })).toMatchObject({ option: 'concurrency' });
    // Without consuming there is no worker to check them for.
    accepts({ inbox: memoryInbox(), consume: false, worker: { concurrency: 0 } });
  });

  it('commitTimeoutMs: a commit slower than it is answered 503 and reported', async () => {
    const stalled: Inbox = new Proxy(memoryInbox(), {
      get: (target, name) => {
        if (name === 'put') return () => new Promise(() => undefined);
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: stalled, consume: false, commitTimeoutMs: 30 });
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const started = Date.now();
    const response = await webhooks.handle(request(body));
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(response.status).toBe(503);
    await response.done;
    expect(errors[0]).toMatchObject({ code: 'inbox_failed' });
    expect(errors[0]!.message).toBe('The event could not be stored in time (The inbox did not commit within 30 ms.); retry later.');
  });

  it('idempotencyKeys replace the documented key', async () => {
    const webhooks = createWebhooks({ auth, logger: {}, idempotencyKeys: { message_sent: () => 'mine' } });
    let key = '';
    webhooks.on('message_sent', (_event, context) => void (key = context.key));
    await (await webhooks.handle(request(body))).done;
    expect(key).toMatch(/:message_sent:mine$/);
  });

  it('handlerTimeoutMs: Infinity and 0 set no timer; a handler may take its time', async () => {
    for (const handlerTimeoutMs of [0, Infinity]) {
      const webhooks = createWebhooks({ auth, logger: {}, handlerTimeoutMs });
      const errors: WebhookError[] = [];
      webhooks.onError((error) => void errors.push(error));
      webhooks.on('message_sent', () => sleep(20));
      await (await webhooks.handle(request(body))).done;
      expect(errors).toEqual([]);
    }
  });

  it('bodyTimeoutMs: Infinity and 0 wait for a slow body', async () => {
    for (const bodyTimeoutMs of [0, Infinity]) {
      const webhooks = createWebhooks({ auth, logger: {}, bodyTimeoutMs });
      const response = await webhooks.handle({ ...request(body), body: () => sleep(30).then(() => body) });
      expect(response.status).toBe(200);
    }
  });
});
