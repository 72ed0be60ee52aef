/**
 * Every mount the Express docs show, behind the body parsers apps put in front, on Express 5 (body-parser 2)
 * and Express 4 (body-parser 1.x): the whole status table, through the real framework. A body the parser
 * refuses (malformed JSON, a charset or content coding it rejects) still gets this toolkit's status and
 * plain-text answer, and reaches onError with the raw body when the parser kept it.
 */
import type { IncomingMessage } from 'node:http';
import express5 from 'express';
import express4 from 'express4';
import supertest from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import type { Webhooks } from '../../src/index.js';
import { AUTH, recordingReceiver, settle, statusTableSuite, type Send } from './status-table.js';

type Express = typeof express5;
type App = ReturnType<Express>;
type Middleware = express5.RequestHandler;

const versions: Record<string, Express> = { 'Express 5': express5, 'Express 4': express4 };

const keepRawBody = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buffer;
};

/** The parsers an app puts in front, app-wide. */
const parsersOf = (e: Express): Record<string, () => Middleware[]> => ({
  'no body parser': () => [],
  'express.json()': () => [e.json()],
  'express.json({ verify }) keeping req.rawBody': () => [e.json({ verify: keepRawBody })],
  'express.text()': () => [e.text()],
  "express.text({ type: '*/*' })": () => [e.text({ type: '*/*' })],
  'express.raw()': () => [e.raw()],
  "express.raw({ type: '*/*' })": () => [e.raw({ type: '*/*' })],
  'express.urlencoded()': () => [e.urlencoded({ extended: false })],
  'json, text, raw and urlencoded together': () => [e.json(), e.text(), e.raw(), e.urlencoded({ extended: false })],
});

interface MountStyle {
  /** The URL deliveries are sent to. */
  url: string;
  /** Builds the app: parsers app-wide, then the webhook mount as its docs show it. */
  build(e: Express, webhooks: Webhooks, parsers: Middleware[]): App;
}

const mounts: Record<string, MountStyle> = {
  "app.use('/webhooks', expressMiddleware(webhooks))": {
    url: '/webhooks',
    build(e, webhooks, parsers) {
      const app = e();
      for (const parser of parsers) app.use(parser);
      app.use('/webhooks', expressMiddleware(webhooks));
      return app;
    },
  },
  "app.use(expressMiddleware(webhooks, { path: '/webhooks' }))": {
    url: '/webhooks',
    build(e, webhooks, parsers) {
      const app = e();
      for (const parser of parsers) app.use(parser);
      app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
      return app;
    },
  },
  // Express hands a router no error raised outside it (a router is not an error handler), so a router's
  // parsers go inside it, as an app's go app-wide.
  "router.use('/webhooks', …) under app.use('/api', router), parsers router-wide": {
    url: '/api/webhooks',
    build(e, webhooks, parsers) {
      const app = e();
      const router = e.Router();
      for (const parser of parsers) router.use(parser);
      router.use('/webhooks', expressMiddleware(webhooks));
      app.use('/api', router);
      return app;
    },
  },
  "app.all('/webhooks', …) before the app-wide parsers": {
    url: '/webhooks',
    build(e, webhooks, parsers) {
      const app = e();
      app.all('/webhooks', expressMiddleware(webhooks));
      for (const parser of parsers) app.use(parser);
      return app;
    },
  },
};

function sender(app: App, url: string): Send {
  return async ({ method, headers, body }) => {
    const test = supertest(app)
      [method.toLowerCase() as 'post'](url)
      .set(headers)
      .serialize((data: unknown) => data as string);
    const response = await (body === undefined ? test : test.send(body));
    return { status: response.status, headers: response.headers, body: response.text };
  };
}

for (const [version, e] of Object.entries(versions)) {
  const parsers = parsersOf(e);
  for (const [mountName, mount] of Object.entries(mounts)) {
    // Every parser with the first mount; the others with no parser and with all four parsers.
    const chosen = mountName.startsWith("app.use('/webhooks'")
      ? Object.keys(parsers)
      : ['no body parser', 'json, text, raw and urlencoded together'];
    for (const parserName of chosen) {
      statusTableSuite(`${version}, ${parserName}, ${mountName}`, async (webhooks) => ({
        send: sender(mount.build(e, webhooks, (parsers[parserName] as () => Middleware[])()), mount.url),
      }));
    }
  }
}

describe.each(Object.entries(versions))('%s: a body the parser refused, answered by the receiver', (_version, e) => {
  const build = (webhooks: Webhooks, parsers: Middleware[]) => {
    const app = e();
    for (const parser of parsers) app.use(parser);
    app.use('/webhooks', expressMiddleware(webhooks));
    return sender(app, '/webhooks');
  };
  const headers = { 'content-type': 'application/json', authorization: AUTH };

  it('malformed JSON behind express.json(): 400 in plain text, onError with the raw body, no HTML page', async () => {
    const { webhooks, errors } = recordingReceiver();
    const response = await build(webhooks, [e.json()])({ method: 'POST', headers, body: '{"trigger":' });
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).not.toMatch(/<html|<!DOCTYPE/i);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
    expect(errors[0]?.rawBody).toBe('{"trigger":');
  });

  it('JSON that is not an object (strict parser refuses `null`): 400 invalid_envelope like every adapter', async () => {
    const { webhooks, errors } = recordingReceiver();
    const response = await build(webhooks, [e.json()])({ method: 'POST', headers, body: 'null' });
    expect(response.status).toBe(400);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['invalid_envelope']);
  });

  it('a charset the parser rejects (latin1): the receiver’s 415, not the parser’s page', async () => {
    const { webhooks, errors } = recordingReceiver();
    const sent = { ...headers, 'content-type': 'application/json; charset=latin1' };
    const response = await build(webhooks, [e.json()])({ method: 'POST', headers: sent, body: '{}' });
    expect(response.status).toBe(415);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type']);
  });

  it('a body over both limits: the receiver’s 413; over the parser’s limit only: the app’s answer', async () => {
    const { webhooks } = recordingReceiver(); // maxBodyBytes 4096
    const over = await build(webhooks, [e.json({ limit: 100 })])({ method: 'POST', headers, body: `{"x":"${'a'.repeat(5000)}"}` });
    expect(over.status).toBe(413);
    expect(over.headers['content-type']).toMatch(/^text\/plain/);
    const appLimit = await build(webhooks, [e.json({ limit: 100 })])({ method: 'POST', headers, body: `{"x":"${'a'.repeat(500)}"}` });
    expect(appLimit.status).toBe(413);
    expect(appLimit.headers['content-type']).toMatch(/^text\/html/);
  });

  it('the app’s own errors are left to the app', async () => {
    const { webhooks } = recordingReceiver();
    const app = e();
    app.use(() => {
      throw Object.assign(new Error('app failure'), { status: 418 });
    });
    app.use('/webhooks', expressMiddleware(webhooks));
    const response = await sender(app, '/webhooks')({ method: 'POST', headers, body: '{}' });
    expect(response.status).toBe(418);
  });
});

describe.each(Object.entries(versions))('%s: app.post route mounts', (_version, e) => {
  const headers = { 'content-type': 'application/json', authorization: AUTH };

  it('before the app-wide parser: valid and malformed bodies get the receiver’s answers', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = e();
    app.post('/webhooks', expressMiddleware(webhooks));
    app.use(e.json());
    const send = sender(app, '/webhooks');
    expect((await send({ method: 'POST', headers, body: '{"trigger":"message_sent","data":{"message":{"id":"1"}}}' })).status).toBe(200);
    const malformed = await send({ method: 'POST', headers, body: '{"trigger":' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/^text\/plain/);
    await settle();
    expect(events).toHaveLength(0);
    expect(errors.map((error) => error.code)).toEqual(['invalid_payload', 'invalid_json']);
  });

  it('after an app-wide parser: deliveries still work, and a warning names the mount that also answers malformed bodies', async () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error) => {
      warnings.push(String(warning));
    }) as typeof process.emitWarning);
    try {
      const { webhooks, events } = recordingReceiver();
      const app = e();
      app.use(e.json());
      app.post('/webhooks', expressMiddleware(webhooks));
      const send = sender(app, '/webhooks');
      const body = JSON.stringify({ trigger: 'poll_voted', data: {} });
      expect((await send({ method: 'POST', headers, body })).status).toBe(200);
      expect((await send({ method: 'POST', headers, body: JSON.stringify({ trigger: 'poll_closed', data: {} }) })).status).toBe(200);
      await settle();
      expect(events).toHaveLength(0);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("app.use('/webhooks', expressMiddleware(webhooks))");
    } finally {
      spy.mockRestore();
    }
  });
});
