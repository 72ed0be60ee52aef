/**
 * The Fastify plugin behind content-type parsers of the app's own: declared before or after the plugin,
 * app-wide (in the root context) or global through a skip-override plugin, for JSON, `*` and text. The
 * plugin's route keeps answering the whole status table itself; the app's other routes keep their parsers.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { describe, expect, it } from 'vitest';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { AUTH, recordingReceiver, settle, statusTableSuite, type ReceivedResponse, type Send } from './status-table.js';

function send(app: FastifyInstance, url = '/webhooks'): Send {
  return async ({ method, headers, body }) => {
    const response = await app.inject({ method: method as 'POST', url, headers, payload: body });
    const received: ReceivedResponse['headers'] = {};
    for (const [name, value] of Object.entries(response.headers)) received[name] = value === undefined ? undefined : String(value);
    return { status: response.statusCode, headers: received, body: response.body };
  };
}

/** The app's own parsers, the way apps add them. */
const strictJson = (app: FastifyInstance) =>
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 422 }), undefined);
    }
  });
const catchAll = (app: FastifyInstance) =>
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, { bytes: (body as Buffer).length }));
const text = (app: FastifyInstance) =>
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, `text:${body as string}`));

/** skip-override: what fastify-plugin does, making the parsers global rather than encapsulated. */
const globalParsers: FastifyPluginAsync = async (app) => {
  app.removeAllContentTypeParsers();
  strictJson(app);
  catchAll(app);
};
(globalParsers as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

const setups: Record<string, (app: FastifyInstance, plugin: () => PromiseLike<unknown>) => Promise<void>> = {
  'app JSON parser (parseAs string, 422 on bad JSON) declared before the plugin': async (app, plugin) => {
    app.removeContentTypeParser('application/json');
    strictJson(app);
    await plugin();
  },
  'app JSON parser declared after the plugin': async (app, plugin) => {
    await plugin();
    app.removeContentTypeParser('application/json');
    strictJson(app);
  },
  "app '*' and text parsers": async (app, plugin) => {
    catchAll(app);
    text(app);
    await plugin();
  },
  'global parsers from a skip-override plugin registered first': async (app, plugin) => {
    await app.register(globalParsers);
    await plugin();
  },
};

for (const [name, setup] of Object.entries(setups)) {
  statusTableSuite(`fastify, ${name}`, async (webhooks) => {
    const app = Fastify();
    await setup(app, () => app.register(fastifyWebhooks, { webhooks }));
    return { send: send(app), close: () => app.close() };
  });
}

describe('fastify: the app keeps its parsers elsewhere', () => {
  it.each(Object.entries(setups))('%s: malformed JSON gets the receiver’s 400 on the webhook route, the app’s answer on its own', async (_name, setup) => {
    const { webhooks, errors } = recordingReceiver();
    const app = Fastify();
    await setup(app, () => app.register(fastifyWebhooks, { webhooks }));
    app.post('/other', async (request) => ({ body: request.body }));
    try {
      const headers = { 'content-type': 'application/json', authorization: AUTH };
      const ours = await send(app)({ method: 'POST', headers, body: '{"trigger":' });
      expect(ours.status).toBe(400);
      expect(ours.headers['content-type']).toMatch(/^text\/plain/);
      await settle();
      expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
      expect(errors[0]?.rawBody).toBe('{"trigger":');
      const theirs = await send(app, '/other')({ method: 'POST', headers, body: '{"a":1}' });
      expect(theirs.status).toBe(200);
      expect(JSON.parse(theirs.body)).toEqual({ body: { a: 1 } });
    } finally {
      await app.close();
    }
  });
});
