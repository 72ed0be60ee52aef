/**
 * Timing at the edges of a request: a shutdown that starts while a body is still arriving, bodies that
 * trickle or stall, and refusals made before the body is read (which close the connection).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, type WebhookError } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';
import type { WebhookBody } from '../../src/receive/parse/parse.js';

const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const auth = { username: 'platform', password: 's3cret' };
const headers = { 'content-type': 'application/json', authorization: basicAuthHeader(auth.username, auth.password) };

/** A body reader the test completes by hand, as a socket delivering the body late would. */
function lateBody() {
  let arrive: (body: WebhookBody) => void = () => undefined;
  const reading = new Promise<WebhookBody>((resolve) => (arrive = resolve));
  return { reader: () => reading, arrive: (value: WebhookBody) => arrive(value) };
}

function receiver(options: Record<string, unknown> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  const errors: WebhookError[] = [];
  const handled: string[] = [];
  webhooks.onError((error) => void errors.push(error));
  webhooks.on('message_sent', (event) => void handled.push(event.trigger));
  return { webhooks, errors, handled };
}

describe('close() and a delivery whose body is still arriving', () => {
  it('a body completing after close() is answered 503 (the platform retries), and no handler runs after close resolved', async () => {
    const { webhooks, handled } = receiver();
    const { reader, arrive } = lateBody();
    const answer = webhooks.handle({ method: 'POST', headers, body: reader });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = await webhooks.close({ timeoutMs: 100 });
    expect(closed).toEqual({ drained: 0, abandoned: 0 });
    arrive(body);
    const response = await answer;
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBeDefined();
    expect(response.headers.connection).toBe('close');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handled).toEqual([]);
  });
});

describe('body deadline', () => {
  it('a stalled body is answered 408 with Connection: close once bodyTimeoutMs passed, and reported', async () => {
    const { webhooks, errors, handled } = receiver({ bodyTimeoutMs: 50 });
    const started = Date.now();
    const response = await webhooks.handle({ method: 'POST', headers, body: () => new Promise(() => undefined) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(response.status).toBe(408);
    expect(response.headers.connection).toBe('close');
    await response.done;
    expect(errors.map((error) => error.code)).toEqual(['body_timeout']);
    expect(handled).toEqual([]);
  });

  it('a body arriving before the deadline is answered normally, and a late arrival after a 408 is ignored', async () => {
    // No duplicate window: the late body is the same delivery, and must be dropped for being late, not as a repeat.
    // 200 ms: the in-time body (sent 5 ms in) must beat the deadline even when a loaded machine delays its timer.
    const { webhooks, handled } = receiver({ bodyTimeoutMs: 200, dedupe: false });
    const inTime = lateBody();
    const first = webhooks.handle({ method: 'POST', headers, body: inTime.reader });
    setTimeout(() => inTime.arrive(body), 5);
    expect((await first).status).toBe(200);
    const late = lateBody();
    const sent: number[] = [];
    webhooks.respond({ method: 'POST', headers, body: late.reader }, (response) => void sent.push(response.status));
    // The body arrives only once the 408 went out, however late the deadline's tick fires here.
    await vi.waitFor(() => expect(sent).toEqual([408]), { timeout: 5_000, interval: 10 });
    late.arrive(body);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toEqual([408]);
    expect(handled).toEqual(['message_sent']);
  });

  it('defaults to 10 seconds, takes 0 or Infinity for none, and refuses anything else', () => {
    expect(() => createWebhooks({ auth, bodyTimeoutMs: -1 })).toThrow(ConfigurationError);
    expect(() => createWebhooks({ auth, bodyTimeoutMs: Number.NaN })).toThrow(ConfigurationError);
    expect(() => createWebhooks({ auth, bodyTimeoutMs: 0 })).not.toThrow();
    expect(() => createWebhooks({ auth, bodyTimeoutMs: Infinity })).not.toThrow();
  });

  it('bodyTimeoutMs: 0 waits for a slow body as long as it takes', async () => {
    const { webhooks } = receiver({ bodyTimeoutMs: 0 });
    const slow = lateBody();
    const answer = webhooks.handle({ method: 'POST', headers, body: slow.reader });
    setTimeout(() => slow.arrive(body), 30);
    expect((await answer).status).toBe(200);
  });
});

describe('refusals made before the body is read close the connection', () => {
  it.each([
    ['401', { ...headers, authorization: basicAuthHeader('platform', 'wrong') }, 401],
    ['415', { ...headers, 'content-type': 'text/plain' }, 415],
    ['413 (declared length)', { ...headers, 'content-length': '99999999' }, 413],
  ])('%s answers Connection: close, so the unread body is not drained', async (_name, sent, status) => {
    const { webhooks } = receiver();
    const response = await webhooks.handle({ method: 'POST', headers: sent, body: () => new Promise(() => undefined) });
    expect(response.status).toBe(status);
    expect(response.headers.connection).toBe('close');
  });

  it('a 200 keeps the connection', async () => {
    const { webhooks } = receiver();
    const response = await webhooks.handle({ method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBeUndefined();
  });
});
