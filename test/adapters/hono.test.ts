/**
 * chat-webhooks/hono in a real Hono app (`app.request()`, Hono's own dispatch): the status table, the
 * handlers after the answer under `c.executionCtx.waitUntil` on Workers (Hono passes the execution context
 * given to `app.request`/`fetch`), and Node/Bun/Deno where Hono's `c.executionCtx` getter throws.
 */
import { Hono } from 'hono';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { honoHandler, type HonoHandler } from '../../adapters/hono/index.js';
import { ConfigurationError, type Webhooks } from '../../src/index.js';
import { AUTH, fixture, recordingReceiver, settle, statusTableSuite, type Send } from './status-table.js';

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
