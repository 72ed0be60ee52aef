/**
 * Telemetry through every adapter, with the real SDK: each delivery is one SERVER span (`POST <route>`) that
 * takes a proxy's `traceparent` as its parent, says its status, and (no inbox) has the handlers' run as a
 * child span; refusals carry their WebhookError code as `error.type`; no attribute holds a user id, message
 * text or credential.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { fetchHandler } from '../../adapters/fetch/index.js';
import { honoHandler } from '../../adapters/hono/index.js';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import type { OpenTelemetryOptions } from '../../src/telemetry/otel/index.js';
import { basicAuthHeader, createTestEvent } from '../../src/testing/index.js';
import { httpApiEvent, lambdaContext } from '../adapters/lambda-events.js';
import { sdk, valueOf, waitFor } from './sdk.js';

const AUTH = basicAuthHeader('platform', 's3cret-pass');
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const event = createTestEvent('message_sent', {
  data: { message: { conversationId: 'superhero1_user_superhero2', sender: 'superhero1', data: { text: 'a private word' } } },
});
const body = JSON.stringify(event);

interface Sent {
  status: number;
}
type Send = (headers: Record<string, string>, body: string) => Promise<Sent>;
type Mount = (webhooks: Webhooks) => Promise<{ send: Send; close: () => Promise<void> }>;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const mounts: Record<string, { route: string; otel?: Pick<OpenTelemetryOptions, 'route'>; mount: Mount }> = {
  // A mount's pattern is not Express's to tell: the route is openTelemetry's.
  express: {
    route: '/webhooks',
    otel: { route: '/webhooks' },
    async mount(webhooks) {
      const app = express();
      app.use('/webhooks', expressMiddleware(webhooks));
      return {
        send: async (headers, text) => ({ status: (await supertest(app).post('/webhooks').set(headers).send(text)).status }),
        close: async () => undefined,
      };
    },
  },
  fastify: {
    route: '/hooks/webhooks',
    async mount(webhooks) {
      const app = Fastify();
      await app.register(fastifyWebhooks, { webhooks, prefix: '/hooks' });
      return {
        send: async (headers, text) => ({ status: (await app.inject({ method: 'POST', url: '/hooks/webhooks', headers, payload: text })).statusCode }),
        close: () => app.close(),
      };
    },
  },
  hono: {
    route: '/hooks/:app',
    async mount(webhooks) {
      const app = new Hono();
      app.post('/hooks/:app', honoHandler(webhooks));
      return {
        send: async (headers, text) => ({ status: (await app.request('/hooks/chat', { method: 'POST', headers, body: text })).status }),
        close: async () => undefined,
      };
    },
  },
  lambda: {
    route: '/webhooks',
    async mount(webhooks) {
      const handler = lambdaHandler(webhooks, { path: '/webhooks' });
      return {
        send: async (headers, text) => ({ status: (await handler(httpApiEvent({ method: 'POST', headers, body: text }), lambdaContext())).statusCode }),
        close: async () => undefined,
      };
    },
  },
  fetch: {
    route: '/webhooks',
    async mount(webhooks) {
      const handler = fetchHandler(webhooks, { path: '/webhooks' });
      return {
        send: async (headers, text) => ({ status: (await handler(new Request('https://hooks.example.com/webhooks', { method: 'POST', headers, body: text }))).status }),
        close: async () => undefined,
      };
    },
  },
  node: {
    route: '/webhooks',
    async mount(webhooks) {
      const server = createServer(nodeMiddleware(webhooks, { path: '/webhooks' }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      return {
        send: async (headers, text) => ({ status: (await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body: text })).status }),
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  },
};

describe.each(Object.entries(mounts))('telemetry through %s', (_name, { route, otel: options, mount }) => {
  it('traces a delivery from the proxy’s traceparent to its handlers, and refusals with their error.type', async () => {
    const otel = sdk(options);
    closers.push(() => otel.shutdown());
    const webhooks = createWebhooks({ auth: { username: 'platform', password: 's3cret-pass' }, telemetry: otel.telemetry, logLevel: 'silent' });
    let handled = 0;
    webhooks.on('message_sent', () => void handled++);
    const { send, close } = await mount(webhooks);
    closers.push(close);
    const json = { 'content-type': 'application/json' };

    expect((await send({ ...json, authorization: AUTH, traceparent: TRACEPARENT, 'x-forwarded-proto': 'https' }, body)).status).toBe(200);
    expect((await send({ ...json, authorization: basicAuthHeader('platform', 'wrong') }, body)).status).toBe(401);
    expect((await send({ ...json, authorization: AUTH }, '{not json')).status).toBe(400);
    await waitFor(() => handled === 1 && otel.spans().length === 4);

    const servers = otel.spans().filter((span) => span.kind === SpanKind.SERVER);
    expect(servers.map((span) => span.name)).toEqual([`POST ${route}`, `POST ${route}`, `POST ${route}`]);
    const [accepted, unauthorized, invalid] = servers;
    expect(accepted?.spanContext().traceId).toBe(TRACE_ID);
    expect(accepted?.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(accepted?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'http.route': route,
      'url.scheme': 'https',
      'chat_webhooks.trigger': 'message_sent',
    });
    expect(accepted?.attributes['error.type']).toBeUndefined();
    expect(accepted?.attributes['chat_webhooks.idempotency_key.digest']).toMatch(/^[0-9a-f]{24}$/);
    expect(accepted?.attributes['messaging.message.conversation_id']).toMatch(/^[0-9a-f]{24}$/);
    expect(unauthorized?.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': 'unauthorized' });
    expect(invalid?.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': 'invalid_json' });
    // A new trace for each request without a traceparent.
    expect(unauthorized?.spanContext().traceId).not.toBe(TRACE_ID);

    const handle = otel.spans().find((span) => span.name === 'handle message_sent');
    expect(handle?.kind).toBe(SpanKind.INTERNAL);
    expect(handle?.parentSpanContext?.spanId).toBe(accepted?.spanContext().spanId);
    expect(handle?.spanContext().traceId).toBe(TRACE_ID);

    // Never a user id, message text or credential in any attribute.
    const recorded = JSON.stringify(otel.spans().map((span) => span.attributes));
    for (const secret of ['superhero1', 'a private word', 's3cret-pass', event.data.message.id]) expect(recorded).not.toContain(secret);

    const deliveries = await otel.points('chat_webhooks.deliveries');
    expect(valueOf(deliveries, { 'chat_webhooks.outcome': 'accepted', 'chat_webhooks.trigger': 'message_sent' })).toBe(1);
    expect(valueOf(deliveries, { 'chat_webhooks.outcome': 'refused', 'chat_webhooks.reason': 'unauthorized' })).toBe(1);
    expect(valueOf(deliveries, { 'chat_webhooks.outcome': 'refused', 'chat_webhooks.reason': 'invalid_json' })).toBe(1);
    const durations = await otel.points('http.server.request.duration');
    expect(valueOf(durations, { 'http.response.status_code': 200, 'http.route': route })).toBe(1);
    await webhooks.close();
  });
});

describe('the idempotency key digest on the request span', () => {
  it('is of the key each event is recognised by: for an event keyed by its body, the body', async () => {
    const otel = sdk();
    closers.push(() => otel.shutdown());
    const webhooks = createWebhooks({ auth: { username: 'platform', password: 's3cret-pass' }, telemetry: otel.telemetry, logLevel: 'silent' });
    webhooks.onUnknown(() => undefined);
    // A trigger this version does not know has no key fields: its key is the body's exact text, so the same
    // event spaced otherwise is another key (as the receiver's repeat check sees it), and the same text the same.
    const bodies = ['{"trigger":"poll_voted","data":{"n":1}}', '{ "trigger": "poll_voted", "data": { "n": 1 } }'];
    for (const unknown of [...bodies, bodies[0]!]) {
      const response = await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: unknown });
      expect(response.status).toBe(200);
      await response.done;
    }
    await waitFor(() => otel.spans().filter((span) => span.kind === SpanKind.SERVER).length === 3);
    const digests = otel.spans().filter((span) => span.kind === SpanKind.SERVER).map((span) => span.attributes['chat_webhooks.idempotency_key.digest']);
    expect(digests[0]).toMatch(/^[0-9a-f]{24}$/);
    expect(digests[1]).not.toBe(digests[0]);
    expect(digests[2]).toBe(digests[0]);
    await webhooks.close();
  });
});
