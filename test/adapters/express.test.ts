import type { IncomingMessage } from 'node:http';
import express, { type Express } from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import type { Webhooks } from '../../src/index.js';
import {
  AUTH,
  LIMIT,
  fixture,
  messageOfSize,
  recordingReceiver,
  settle,
  statusTableSuite,
  type Send,
} from './status-table.js';
import { sendChunked } from './servers.js';

const json = { 'content-type': 'application/json', authorization: AUTH };

/** Sends through supertest, passing the raw body through untouched. */
function send(app: Express, path = '/'): Send {
  return async ({ method, headers, body }) => {
    // serialize() as is: superagent would JSON-encode a Buffer sent as application/json.
    const test = supertest(app)[method.toLowerCase() as 'post'](path).set(headers).serialize((data: unknown) => data as string);
    const response = await (body === undefined ? test : test.send(body));
    return { status: response.status, headers: response.headers, body: response.text };
  };
}


function appWith(webhooks: Webhooks, ...before: express.RequestHandler[]): Express {
  const app = express();
  for (const middleware of before) app.use(middleware);
  app.use(expressMiddleware(webhooks));
  return app;
}

/** Keeps the exact bytes, as apps with signature checks often do. */
const keepRawBody = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buffer;
};

statusTableSuite('express', async (webhooks) => ({ send: send(appWith(webhooks)) }));
statusTableSuite('express behind app-wide express.json()', async (webhooks) => ({
  send: send(appWith(webhooks, express.json())),
}));
statusTableSuite('express behind express.json({ verify }) keeping req.rawBody', async (webhooks) => ({
  send: send(appWith(webhooks, express.json({ verify: keepRawBody }))),
}));
statusTableSuite("express behind express.raw({ type: '*/*' })", async (webhooks) => ({
  send: send(appWith(webhooks, express.raw({ type: '*/*' }))),
}));
statusTableSuite("express behind express.text({ type: '*/*' })", async (webhooks) => ({
  send: send(appWith(webhooks, express.text({ type: '*/*' }))),
}));

describe('express mounting', () => {
  it('with a path, passes other paths to next() and takes its own (query string and all)', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = express();
    app.use(expressMiddleware(webhooks, { path: '/hooks' }));
    app.use((_req, res) => void res.status(299).send('next'));
    const elsewhere = await send(app, '/other')({ method: 'POST', headers: json, body: fixture('message_sent') });
    expect(elsewhere.status).toBe(299);
    expect(elsewhere.body).toBe('next');
    const here = await send(app, '/hooks?source=test')({ method: 'POST', headers: json, body: fixture('message_sent') });
    expect(here.status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
  });

  it('works as a route handler: app.post(path, middleware), other routes untouched', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = express();
    app.post('/hooks', expressMiddleware(webhooks));
    app.get('/health', (_req, res) => void res.send('up'));
    expect((await send(app, '/hooks')({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(200);
    expect((await send(app, '/health')({ method: 'GET', headers: {} })).body).toBe('up');
    await settle();
    expect(events).toHaveLength(1);
  });

  it('works mounted at a path with app.use(path, middleware), the path option then relative to it', async () => {
    const { webhooks, events } = recordingReceiver();
    const app = express();
    app.use('/api', expressMiddleware(webhooks, { path: '/hooks' }));
    app.use((_req, res) => void res.status(299).send('next'));
    expect((await send(app, '/api/hooks')({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(200);
    expect((await send(app, '/api/other')({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(299);
    const get = await send(app, '/api/hooks')({ method: 'GET', headers: {} });
    expect(get.status).toBe(405);
    await settle();
    expect(events).toHaveLength(1);
  });

  it('leaves errors it does not own to the app: other middleware errors and a body parser refusing at its own limit', async () => {
    const { webhooks, errors } = recordingReceiver();
    const app = express();
    app.use('/boom', (_req, _res, next) => next(new Error('boom')));
    app.use(express.json({ limit: 100 }));
    app.use(expressMiddleware(webhooks));
    app.use((error: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(590 + (error.status === 413 ? 3 : 0)).send('app error handler');
    });
    expect((await send(app, '/boom')({ method: 'POST', headers: json, body: '{}' })).status).toBe(590);
    expect((await send(app)({ method: 'POST', headers: json, body: fixture('message_sent') })).status).toBe(593);
    await settle();
    expect(errors).toEqual([]);
  });
});

describe('express behind app-wide express.json()', () => {
  it('runs the handlers of a valid delivery exactly once', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = appWith(webhooks, express.json());
    for (let i = 0; i < 3; i++) {
      const event = JSON.parse(fixture('message_sent'));
      event.data.message.id = `m-${i}`;
      expect((await send(app)({ method: 'POST', headers: json, body: JSON.stringify(event) })).status).toBe(200);
    }
    await settle();
    expect(events.map((event) => (event.data as { message: { id: string } }).message.id)).toEqual(['m-0', 'm-1', 'm-2']);
    expect(errors).toEqual([]);
  });

  it("answers JSON that express.json's strict mode refuses through the receiver, raw body kept", async () => {
    const { webhooks, errors } = recordingReceiver();
    const response = await send(appWith(webhooks, express.json()))({ method: 'POST', headers: json, body: '"just text"' });
    expect(response.status).toBe(400);
    expect(response.body).not.toMatch(/at \w+ \(/); // no stack trace from Express's error page
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['invalid_envelope']);
    expect(errors[0]?.rawBody).toBe('"just text"');
  });

  it('still refuses malformed JSON without credentials with 401, not the 400 of the parse error', async () => {
    const { webhooks, errors } = recordingReceiver();
    const headers = { 'content-type': 'application/json' };
    const response = await send(appWith(webhooks, express.json()))({ method: 'POST', headers, body: '{"trigger":' });
    expect(response.status).toBe(401);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['unauthorized']);
  });

  it('answers 413 by Content-Length even when express.json allows more', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const response = await send(appWith(webhooks, express.json({ limit: '10mb' })))({
      method: 'POST',
      headers: json,
      body: messageOfSize(LIMIT * 4),
    });
    expect(response.status).toBe(413);
    await settle();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('measures a chunked body against the limit when req.rawBody was kept', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = appWith(webhooks, express.json({ limit: '10mb', verify: keepRawBody }));
    expect((await sendChunked(app, '/', json, messageOfSize(LIMIT + 1))).status).toBe(413);
    expect((await sendChunked(app, '/', json, messageOfSize(LIMIT))).status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it("leaves a chunked body that only survives as a parsed object to express.json's own limit", async () => {
    // Without Content-Length or the original bytes, the size of what was sent is unknowable here:
    // re-serializing the object would measure a different text. express.json's `limit` is the bound.
    const { webhooks, events } = recordingReceiver();
    const app = appWith(webhooks, express.json({ limit: '10mb' }));
    expect((await sendChunked(app, '/', json, messageOfSize(LIMIT + 1))).status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
  });
});

describe('express reading the stream itself', () => {
  it('answers 413 to a chunked body over the limit, stopping early', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const app = appWith(webhooks);
    const response = await sendChunked(app, '/', json, messageOfSize(LIMIT * 50));
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    await settle();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('does not wait for a stream something else consumed without leaving a body', async () => {
    const { webhooks, errors } = recordingReceiver();
    const drain: express.RequestHandler = (req, _res, next) => {
      req.resume();
      req.on('end', () => next());
    };
    const response = await send(appWith(webhooks, drain))({ method: 'POST', headers: json, body: fixture('message_sent') });
    expect(response.status).toBe(400);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });

  it('reads nothing of an unauthenticated body', async () => {
    const { webhooks } = recordingReceiver();
    let bytesRead = 0;
    const app = express();
    app.use((req, _res, next) => {
      req.on('data', (chunk: Buffer) => (bytesRead += chunk.length));
      req.pause();
      next();
    });
    app.use(expressMiddleware(webhooks));
    const response = await send(app)({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: fixture('message_sent'),
    });
    expect(response.status).toBe(401);
    expect(bytesRead).toBe(0);
  });
});
