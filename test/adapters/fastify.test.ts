import { Readable, Writable } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyServerOptions, type InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import type { Webhooks } from '../../src/index.js';
import {
  AUTH,
  LIMIT,
  fixture,
  messageOfSize,
  recordingReceiver,
  settle,
  statusTableSuite,
  type ReceivedResponse,
  type Send,
} from './status-table.js';

const json = { 'content-type': 'application/json', authorization: AUTH };

function send(app: FastifyInstance, url = '/webhooks'): Send {
  return async ({ method, headers, body }) => inject(app, { method: method as 'POST', url, headers, payload: body });
}

async function inject(app: FastifyInstance, options: InjectOptions): Promise<ReceivedResponse> {
  const response = await app.inject(options);
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
  }
  return { status: response.statusCode, headers, body: response.body };
}

statusTableSuite('fastify', async (webhooks) => {
  const app = Fastify();
  await app.register(fastifyWebhooks, { webhooks });
  return { send: send(app), close: () => app.close() };
});

describe('fastify plugin', () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  async function appWith(webhooks: Webhooks, extra: { path?: string; prefix?: string } = {}, server?: FastifyServerOptions) {
    const app = Fastify(server);
    apps.push(app);
    await app.register(fastifyWebhooks, { webhooks, ...extra });
    return app;
  }

  it('keeps the rest of the app parsing as before (encapsulation)', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = await appWith(webhooks);
    app.post('/other', async (request) => ({ type: typeof request.body, body: request.body }));
    const parsed = await inject(app, { method: 'POST', url: '/other', headers: json, payload: '{"a":1}' });
    expect(parsed.status).toBe(200);
    expect(JSON.parse(parsed.body)).toEqual({ type: 'object', body: { a: 1 } });
    const text = await inject(app, { method: 'POST', url: '/other', headers: { 'content-type': 'text/plain' }, payload: 'hi' });
    expect(JSON.parse(text.body)).toEqual({ type: 'string', body: 'hi' });
    const xml = await inject(app, { method: 'POST', url: '/other', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
    expect(xml.status).toBe(415);
    expect(JSON.parse(xml.body).code).toBe('FST_ERR_CTP_INVALID_MEDIA_TYPE');
    // …while the webhook route beside it still takes its deliveries.
    expect((await send(app)({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
  });

  it('serves under a register prefix, path relative to it', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = Fastify();
    apps.push(app);
    await app.register(fastifyWebhooks, { webhooks, prefix: '/chat' });
    await app.register(fastifyWebhooks, { webhooks, prefix: '/hooks', path: '/' });
    // Distinct messages: a repeat of one would be taken as a duplicate and not dispatched again.
    const delivery = (id: string) => {
      const event = JSON.parse(fixture('message_sent'));
      event.data.message.id = id;
      return { method: 'POST', headers: json, body: JSON.stringify(event) };
    };
    expect((await send(app, '/chat/webhooks')(delivery('m-1'))).status).toBe(200);
    expect((await send(app, '/hooks')(delivery('m-2'))).status).toBe(200);
    expect((await send(app, '/webhooks')(delivery('m-3'))).status).toBe(404);
    await settle();
    expect(events).toHaveLength(2);
  });

  it('lets the receiver answer every method, not Fastify', async () => {
    const { webhooks } = recordingReceiver();
    const app = await appWith(webhooks, { path: '/in' });
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const response = await inject(app, { method, url: '/in', headers: json, payload: method === 'GET' || method === 'HEAD' ? undefined : '{}' });
      expect([method, response.status, response.headers.allow]).toEqual([method, 405, 'POST']);
    }
  });

  it('takes a delivery without Content-Type (Fastify alone would answer 415)', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = await appWith(webhooks);
    const response = await send(app)({ method: 'POST', headers: { authorization: AUTH }, body: fixture('message_sent') });
    expect(response.status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
  });

  it("is not bound by Fastify's bodyLimit: the receiver's limit decides, with its own 413", async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = await appWith(webhooks, {}, { bodyLimit: 1000 });
    expect((await send(app)({ method: 'POST', headers: json, body: messageOfSize(LIMIT) })).status).toBe(200);
    expect((await send(app)({ method: 'POST', headers: json, body: messageOfSize(LIMIT + 1) })).status).toBe(413);
    await settle();
    expect(events).toHaveLength(1);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('answers 413 to a streamed body over the limit without Content-Length, reading stopped early', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = await appWith(webhooks);
    const body = messageOfSize(LIMIT * 50);
    let pulled = 0;
    const payload = new Readable({
      read() {
        if (pulled >= body.length) return void this.push(null);
        this.push(body.slice(pulled, pulled + 1024));
        pulled += 1024;
      },
    });
    const response = await inject(app, { method: 'POST', url: '/webhooks', headers: json, payload });
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(body.length);
    await settle();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it("leaves Fastify's request logging as it was", async () => {
    const lines: Array<{ msg?: string; res?: { statusCode?: number } }> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString('utf8')));
        callback();
      },
    });
    const { webhooks } = recordingReceiver();
    const app = await appWith(webhooks, {}, { logger: { level: 'info', stream } });
    await send(app)({ method: 'POST', headers: json, body: fixture('message_sent') });
    expect(lines.some((line) => line.msg === 'request completed' && line.res?.statusCode === 200)).toBe(true);
  });

  it('refuses to register without a receiver, and the types require one', async () => {
    const app = Fastify();
    apps.push(app);
    // @ts-expect-error `webhooks` is required
    app.register(fastifyWebhooks, { path: '/in' });
    await expect(app.ready()).rejects.toThrow(/needs the receiver/);
  });

  it("takes the options Fastify's register() gives any plugin: logLevel and logSerializers", async () => {
    const lines: Array<{ msg?: string }> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString('utf8')));
        callback();
      },
    });
    const { webhooks, events } = recordingReceiver();
    const app = Fastify({ logger: { level: 'info', stream } });
    apps.push(app);
    await app.register(fastifyWebhooks, { webhooks, logLevel: 'warn', logSerializers: { req: () => 'request' } });
    expect((await send(app)({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
    // logLevel reached the route: its info-level "request completed" line is gone.
    expect(lines.some((line) => line.msg === 'request completed')).toBe(false);
  });

  it('refuses a receiver without handle(), or no options at all, with a ConfigurationError naming `webhooks`', async () => {
    for (const options of [{ webhooks: {} as Webhooks }, undefined]) {
      const app = Fastify();
      apps.push(app);
      app.register(fastifyWebhooks, options as never);
      await expect(app.ready()).rejects.toMatchObject({ name: 'ConfigurationError', option: 'webhooks', message: expect.stringMatching(/needs the receiver/) });
    }
  });
});
