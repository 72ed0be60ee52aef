/**
 * Behaviour at the edges that mutation testing found untested: late reads of `done`, drains out of order,
 * a handler rejecting after its timeout, limits set to Infinity or 0, exact header values, the context
 * handed to onError, the 500 fallback, lower-case methods, the cap on remembered credentials.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, createBasicAuthVerifier, type WebhookError } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';

const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const auth = { username: 'platform', password: 's3cret' };
const headers = { 'content-type': 'application/json', authorization: basicAuthHeader(auth.username, auth.password) };
const request = (text = body) => ({ method: 'POST', headers, body: text });
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A distinct delivery each time, so the duplicate window never hides one. */
let serial = 0;
const fresh = () => {
  const event = JSON.parse(body);
  event.data.message.id = `m${serial++}`;
  return JSON.stringify(event);
};

function receiver(options: Record<string, unknown> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  const errors: WebhookError[] = [];
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, errors };
}

describe('done', () => {
  it('read after the handlers finished, it is already settled', async () => {
    const { webhooks } = receiver();
    let ran = 0;
    webhooks.on('message_sent', () => void ran++);
    const response = await webhooks.handle(request());
    await wait(10);
    expect(ran).toBe(1);
    let settled = false;
    void response.done.then(() => (settled = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it('read before, it waits for an async handler', async () => {
    const { webhooks } = receiver();
    let finish: () => void = () => undefined;
    webhooks.on('message_sent', () => new Promise<void>((resolve) => (finish = resolve)));
    const response = await webhooks.handle(request());
    let settled = false;
    void response.done.then(() => (settled = true));
    await wait(10);
    expect(settled).toBe(false);
    finish();
    await wait(1);
    expect(settled).toBe(true);
  });
});

describe('close()', () => {
  it('counts jobs finishing out of order, and reports only the one still running at the deadline', async () => {
    const { webhooks, errors } = receiver();
    const releases: Array<() => void> = [];
    webhooks.on('message_sent', () => new Promise<void>((resolve) => releases.push(resolve)));
    for (let i = 0; i < 3; i++) await webhooks.handle(request(fresh()));
    await wait(5);
    expect(releases).toHaveLength(3);
    const closing = webhooks.close({ timeoutMs: 80 });
    releases[2]?.();
    await wait(5);
    releases[0]?.();
    expect(await closing).toEqual({ drained: 2, abandoned: 1 });
    expect(errors.map((error) => error.code)).toEqual(['shutdown_abandoned']);
    expect((errors[0]?.event as { trigger: string }).trigger).toBe('message_sent');
  });

  it('answers later requests 503 with Retry-After: 5 and Connection: close', async () => {
    const { webhooks } = receiver();
    await webhooks.close();
    const response = await webhooks.handle(request());
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.headers.connection).toBe('close');
  });
});

describe('handler timeouts', () => {
  it('a handler rejecting after its timeout is reported once (handler_timeout), not twice', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 20 });
    webhooks.on('message_sent', () => wait(50).then(() => Promise.reject(new Error('late'))));
    const response = await webhooks.handle(request());
    await response.done;
    await wait(60);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('handlerTimeoutMs: Infinity sets no timer: a slow handler is never reported', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const { webhooks, errors } = receiver({ handlerTimeoutMs: Infinity, bodyTimeoutMs: 0 });
      webhooks.on('message_sent', () => Promise.resolve());
      const calls = spy.mock.calls.length;
      const response = await webhooks.handle(request());
      await response.done;
      expect(spy.mock.calls.length).toBe(calls);
      expect(errors).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('handlerTimeoutMs: 0 turns the limit off too', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 0 });
    webhooks.on('message_sent', () => wait(30));
    const response = await webhooks.handle(request());
    await response.done;
    expect(errors).toEqual([]);
  });
});

describe('limits and options', () => {
  it('maxBodyBytes: 0 (or negative, fractional, NaN) is a configuration mistake', () => {
    for (const maxBodyBytes of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(() => createWebhooks({ auth, maxBodyBytes })).toThrow(ConfigurationError);
    }
    expect(createWebhooks({ auth, maxBodyBytes: 1 }).maxBodyBytes).toBe(1);
  });

  it('an empty configured user name or password is refused at creation', () => {
    expect(() => createWebhooks({ auth: { username: 'platform', password: '' } })).toThrow(/empty/);
    expect(() => createWebhooks({ auth: { username: '', password: 'x' } })).toThrow(/empty/);
    expect(() => createWebhooks({ auth: [auth, { username: 'p', password: '' }] })).toThrow(/auth\[1\]/);
  });

  it('remembers at most 8 accepted headers: a ninth credential is still checked in full each time', () => {
    const rotation = Array.from({ length: 9 }, (_, i) => ({ username: `user${i}`, password: `pass${i}` }));
    const verify = createBasicAuthVerifier(rotation);
    for (const { username, password } of rotation) expect(verify(basicAuthHeader(username, password))).toBe(true);
    const reads = vi.spyOn(String.prototype, 'charCodeAt');
    try {
      verify(basicAuthHeader('nobody', 'wrong'));
      const longest = Math.max(...rotation.map(({ username, password }) => basicAuthHeader(username, password).length));
      // The comparison reads one character of the header per remembered character (the remembered ones are
      // kept as code units): 8 remembered values at most, each compared in full.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(8 * longest);
      expect(reads.mock.calls.length).toBeGreaterThan(7 * longest - 1);
    } finally {
      reads.mockRestore();
    }
  });
});

describe('requests', () => {
  it('takes a lower-case or mixed-case POST method', async () => {
    const { webhooks } = receiver();
    expect((await webhooks.handle({ ...request(fresh()), method: 'post' })).status).toBe(200);
    expect((await webhooks.handle({ ...request(fresh()), method: 'Post' })).status).toBe(200);
    expect((await webhooks.handle({ ...request(fresh()), method: 'get' })).status).toBe(405);
  });

  it('401 and 405 carry their exact header values', async () => {
    const { webhooks } = receiver();
    const unauthorized = await webhooks.handle({ ...request(), headers: { 'content-type': 'application/json' } });
    expect(unauthorized.headers).toMatchObject({
      'www-authenticate': 'Basic realm="webhooks"',
      connection: 'close',
      'content-type': 'text/plain; charset=utf-8',
    });
    const method = await webhooks.handle({ ...request(), method: 'PUT' });
    expect(method.headers).toMatchObject({ allow: 'POST', 'content-type': 'text/plain; charset=utf-8' });
  });

  it('hands onError the event, the raw body and the cause of a failed handler', async () => {
    const { webhooks, errors } = receiver();
    const cause = new Error('boom');
    webhooks.on('message_sent', () => {
      throw cause;
    });
    const text = fresh();
    const response = await webhooks.handle(request(text));
    await response.done;
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error?.code).toBe('handler_failed');
    expect(error?.cause).toBe(cause);
    expect(error?.rawBody).toBe(text);
    expect((error?.event as { trigger: string }).trigger).toBe('message_sent');
    expect(error?.message).toContain('boom');
  });

  it('an unforeseen failure is answered 500 "Internal error." without a stack trace, and logged', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const webhooks = createWebhooks({ auth: false, logger: { error: (fields) => void logged.push(fields) } });
    // A header source whose get() throws: nothing a sender can cause, but it must still be answered.
    const broken = {
      get() {
        throw new Error('header store broke');
      },
    };
    const response = await webhooks.handle({ method: 'POST', headers: broken, body });
    expect(response.status).toBe(500);
    expect(response.body).toBe('Internal error.');
    expect(logged).toEqual([{ reason: 'header store broke' }]);
  });
});
