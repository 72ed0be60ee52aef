/**
 * chat-webhooks/hono in a real Hono app (`app.request()`, Hono's own dispatch): the status table, the
 * handlers after the answer under `c.executionCtx.waitUntil` on Workers (Hono passes the execution context
 * given to `app.request`/`fetch`), and Node/Bun/Deno where Hono's `c.executionCtx` getter throws.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { validator } from 'hono/validator';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { honoHandler, type HonoHandler } from '../../adapters/hono/index.js';
import { ConfigurationError, createWebhooks, idempotencyKey, parseWebhook, type WebhookError, type Webhooks } from '../../src/index.js';
import { AUTH, fixture, LIMIT, PASSWORD, recordingReceiver, settle, statusTableSuite, USER, type Send } from './status-table.js';

const json = { 'content-type': 'application/json', authorization: AUTH };
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sender(webhooks: Webhooks): Send {
  const app = new Hono();
  // `all`: the receiver answers other methods itself (405), as in the status table.
  app.all('/webhooks', honoHandler(webhooks));
  return async (request) => {
    const body = typeof request.body === 'string' || request.body === undefined ? request.body : new Uint8Array(request.body);
    const response = await app.request('/webhooks', { method: request.method, headers: request.headers, body });
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  };
}

statusTableSuite('hono', async (webhooks) => ({ send: sender(webhooks) }));

describe('hono handler', () => {
  function slowReceiver(ms: number) {
    const receiver = recordingReceiver();
    const state = { finished: false };
    receiver.webhooks.on('message_sent', async () => {
      await delay(ms);
      state.finished = true;
    });
    return { ...receiver, state };
  }
  const deliver = (app: Hono, executionCtx?: { waitUntil(promise: Promise<unknown>): void; passThroughOnException(): void; props: unknown }) =>
    app.request('/webhooks', { method: 'POST', headers: json, body: fixture('message_sent') }, undefined, executionCtx);

  it('app.post(path, honoHandler(webhooks)): a delivery is answered 200 and reaches its handler, on Node (no executionCtx)', async () => {
    const { webhooks, state } = slowReceiver(50);
    const app = new Hono();
    app.post('/webhooks', honoHandler(webhooks));
    const response = await deliver(app);
    expect(response.status).toBe(200);
    expect(state.finished).toBe(false);
    await delay(100);
    expect(state.finished).toBe(true);
    // Another method is Hono's to answer: the route takes POST only.
    expect((await app.request('/webhooks')).status).toBe(404);
  });

  it('on Workers, hands the handlers to c.executionCtx.waitUntil and answers at once', async () => {
    const { webhooks, state } = slowReceiver(50);
    const app = new Hono();
    app.post('/webhooks', honoHandler(webhooks, { awaitHandlers: true }));
    const waited: Promise<unknown>[] = [];
    const response = await deliver(app, { waitUntil: (promise) => void waited.push(promise), passThroughOnException: () => {}, props: {} });
    expect(response.status).toBe(200);
    expect(state.finished).toBe(false);
    expect(waited).toHaveLength(1);
    await waited[0];
    expect(state.finished).toBe(true);
  });

  it('with awaitHandlers and no executionCtx, answers once the handlers have finished', async () => {
    const { webhooks, state } = slowReceiver(50);
    const app = new Hono();
    app.post('/webhooks', honoHandler(webhooks, { awaitHandlers: true }));
    expect((await deliver(app)).status).toBe(200);
    expect(state.finished).toBe(true);
  });

  it('with handlerTimeoutMs, a handler that never settles is reported as handler_timeout', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const app = new Hono();
    app.post('/webhooks', honoHandler(webhooks, { awaitHandlers: true, handlerTimeoutMs: 50 }));
    expect((await deliver(app)).status).toBe(200);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('refuses an unknown option, naming the closest', () => {
    const { webhooks } = recordingReceiver();
    expect(() => honoHandler(webhooks, { awaitHandler: true } as never)).toThrow(ConfigurationError);
    expect(() => honoHandler(webhooks, { awaitHandler: true } as never)).toThrow(/awaitHandlers/);
  });

  it('is typed as a Hono handler without needing hono’s types', () => {
    expectTypeOf(honoHandler).returns.toEqualTypeOf<HonoHandler>();
    const app = new Hono<{ Bindings: { WEBHOOK_PASSWORD: string } }>();
    // Compiles against Hono's own Context, with bindings too.
    app.post('/webhooks', honoHandler(recordingReceiver().webhooks));
  });
});

describe('hono handler after a middleware that read the body', () => {
  // The platform's own spelling of the media type; the validator matches it case-insensitively too.
  const headers = { 'content-type': 'Application/json', authorization: AUTH };
  // An unknown trigger's key is the digest of the exact body: spacing and `1.50` survive only in the bytes.
  const bodyOf = (id: string) => `{ "trigger": "poll_voted",  "appId": "app", "webhook": "w", "data": { "poll": "${id}", "score": 1.50 } }`;
  const readers: Record<string, MiddlewareHandler> = {
    'c.req.json()': async (c, next) => {
      await c.req.json();
      await next();
    },
    'c.req.text()': async (c, next) => {
      await c.req.text();
      await next();
    },
    "validator('json')": validator('json', (value) => value),
    'c.req.arrayBuffer()': async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    },
    'c.req.blob()': async (c, next) => {
      await c.req.blob();
      await next();
    },
  };

  function appAfter(reader: MiddlewareHandler, webhooks: Webhooks) {
    const app = new Hono();
    app.use('/webhooks', reader);
    app.post('/webhooks', honoHandler(webhooks, { awaitHandlers: true }));
    return app;
  }

  function keyedReceiver(options: { bodyTimeoutMs?: number } = {}) {
    const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, maxBodyBytes: LIMIT, ...options });
    const keys: string[] = [];
    const errors: WebhookError[] = [];
    webhooks.onUnknown((_event, { key }) => void keys.push(key));
    webhooks.onError((error) => void errors.push(error));
    return { webhooks, keys, errors };
  }

  it.each(Object.keys(readers))('after %s: three valid deliveries are handled, each by its exact bytes', async (name) => {
    const { webhooks, keys, errors } = keyedReceiver();
    const app = appAfter(readers[name] as MiddlewareHandler, webhooks);
    const bodies = ['1', '2', '3'].map(bodyOf);
    for (const body of bodies) {
      const response = await app.request('/webhooks', { method: 'POST', headers, body });
      expect(response.status, await response.text()).toBe(200);
    }
    expect(errors).toEqual([]);
    expect(keys).toEqual(bodies.map((body) => idempotencyKey(parseWebhook(body), body)));
  });

  it("older Hono's parsed-JSON cache: handled, the body serialized again (its exact bytes are gone)", async () => {
    const { webhooks, keys, errors } = keyedReceiver();
    // What c.req.json() did before Hono 4.5: the parsed value, kept under `json`.
    const app = appAfter(async (c, next) => {
      const parsed = c.req.raw.json();
      c.req.bodyCache.json = parsed;
      await parsed;
      await next();
    }, webhooks);
    const body = bodyOf('old');
    const response = await app.request('/webhooks', { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(errors).toEqual([]);
    expect(keys).toEqual([idempotencyKey(parseWebhook(body), JSON.stringify(JSON.parse(body)))]);
  });

  it('a body consumed where Hono kept nothing (c.req.raw): 500 so the platform retries, and onError; never a 400', async () => {
    const { webhooks, keys, errors } = keyedReceiver();
    const app = appAfter(async (c, next) => {
      await c.req.raw.text();
      await next();
    }, webhooks);
    const response = await app.request('/webhooks', { method: 'POST', headers, body: bodyOf('lost') });
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/c\.req\.json\(\)/);
    await settle();
    expect(keys).toEqual([]);
    expect(errors.map((error) => [error.code, error.status])).toEqual([['body_unavailable', 500]]);
    // The checks before the body still come first: a wrong password is a 401, as without the middleware.
    const unauthorized = await app.request('/webhooks', { method: 'POST', headers: { ...headers, authorization: 'Basic eDp5' }, body: bodyOf('lost') });
    expect(unauthorized.status).toBe(401);
  });

  it("the receiver's limits hold for a cached body: 413 past maxBodyBytes, 408 for one still arriving past bodyTimeoutMs", async () => {
    const { webhooks, errors } = keyedReceiver({ bodyTimeoutMs: 100 });
    const large = appAfter(readers['c.req.text()'] as MiddlewareHandler, webhooks);
    const tooLarge = await large.request('/webhooks', { method: 'POST', headers, body: bodyOf('x'.repeat(LIMIT)) });
    expect(tooLarge.status).toBe(413);
    // A middleware that began reading and went on: the body never completes.
    const stalled = appAfter(async (c, next) => {
      void c.req.text().catch(() => undefined);
      await next();
    }, webhooks);
    const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"trigger"')) });
    const started = Date.now();
    const timedOut = await stalled.request('/webhooks', { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
    expect(timedOut.status).toBe(408);
    expect(Date.now() - started).toBeLessThan(5000);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large', 'body_timeout']);
  });
});
