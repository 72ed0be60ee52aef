/**
 * The error half of expressMiddleware, through real Express 5 and Express 4 apps: which errors it answers
 * for the receiver (a body parser's refusal of a delivery) and which it leaves to the app (anything else,
 * another path, a response already started, a parser failure with no body to judge, a body only the app's
 * own limit refuses), and the one-time warning for a route mounted behind a parser.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { AUTH, LIMIT, messageOfSize, recordingReceiver, settle } from './status-table.js';

type Express = typeof express5;
const versions: Record<string, Express> = { 'Express 5': express5, 'Express 4': express4 as unknown as Express };
const json = { 'content-type': 'application/json', authorization: AUTH };

/** An app whose error handler records what reaches it and answers 599. */
function appCatchingErrors(e: Express) {
  const app = e();
  const reached: unknown[] = [];
  const finish = () =>
    app.use((error: unknown, _req: express5.Request, res: express5.Response, _next: express5.NextFunction) => {
      reached.push(error);
      if (res.headersSent) res.end();
      else res.status(599).type('text/plain').send('app error handler');
    });
  return { app, reached, finish };
}

/** A middleware that fails the request with this error, as a body parser would. */
const failWith = (error: unknown): express5.RequestHandler => (_req, _res, next) => next(error);
const parseFailed = (extra: object) => Object.assign(new Error('parse failed'), { type: 'entity.parse.failed', status: 400, ...extra });

describe.each(Object.entries(versions))('%s: errors expressMiddleware leaves to the app', (_version, e) => {
  it('anything that is not an object: a string, a number', async () => {
    for (const error of ['plain string', 42]) {
      const { webhooks, errors } = recordingReceiver();
      const { app, reached, finish } = appCatchingErrors(e);
      app.use(failWith(error));
      app.use('/webhooks', expressMiddleware(webhooks));
      finish();
      const response = await supertest(app).post('/webhooks').set(json).send('{}');
      expect(response.status).toBe(599);
      expect(reached).toEqual([error]);
      await settle();
      expect(errors).toEqual([]);
    }
  });

  it('a parse failure on another path than its own', async () => {
    const { webhooks, errors } = recordingReceiver();
    const { app, reached, finish } = appCatchingErrors(e);
    app.use(e.json());
    app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
    finish();
    const response = await supertest(app).post('/other').set(json).send('{"trigger":');
    expect(response.status).toBe(599);
    expect(reached).toHaveLength(1);
    expect((reached[0] as { type?: string }).type).toBe('entity.parse.failed');
    await settle();
    expect(errors).toEqual([]);
  });

  it('a parse failure after something already started the response', async () => {
    const { webhooks, errors } = recordingReceiver();
    const { app, reached, finish } = appCatchingErrors(e);
    app.use((_req, res, next) => {
      res.writeHead(202, { 'content-type': 'text/plain' });
      res.flushHeaders();
      next(parseFailed({ body: '{"trigger":' }));
    });
    app.use('/webhooks', expressMiddleware(webhooks));
    finish();
    const response = await supertest(app).post('/webhooks').set(json).send('{"trigger":');
    expect(response.status).toBe(202);
    expect(reached).toHaveLength(1);
    await settle();
    expect(errors).toEqual([]);
  });

  it('a parse failure that kept neither the raw body nor the text it failed on', async () => {
    const { webhooks, errors } = recordingReceiver();
    const { app, reached, finish } = appCatchingErrors(e);
    app.use(failWith(parseFailed({ body: { not: 'text' } })));
    app.use('/webhooks', expressMiddleware(webhooks));
    finish();
    expect((await supertest(app).post('/webhooks').set(json).send('{}')).status).toBe(599);
    expect(reached).toHaveLength(1);
    await settle();
    expect(errors).toEqual([]);
  });

  it('a body of exactly maxBodyBytes that only the parser’s smaller limit refuses', async () => {
    const { webhooks, errors } = recordingReceiver(); // maxBodyBytes = LIMIT
    const { app, reached, finish } = appCatchingErrors(e);
    app.use(e.json({ limit: 100 }));
    app.use('/webhooks', expressMiddleware(webhooks));
    finish();
    const response = await supertest(app).post('/webhooks').set(json).send(messageOfSize(LIMIT));
    expect(response.status).toBe(599);
    expect((reached[0] as { type?: string }).type).toBe('entity.too.large');
    await settle();
    expect(errors).toEqual([]);
  });
});

describe.each(Object.entries(versions))('%s: parser refusals the receiver answers', (_version, e) => {
  it('a malformed body whose raw text the app kept as a string: 400, onError gets that text', async () => {
    const { webhooks, errors } = recordingReceiver();
    const app = e();
    app.use(
      e.json({
        verify: (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
          (req as IncomingMessage & { rawBody?: string }).rawBody = `${buffer.toString('utf8')}`;
        },
      }),
    );
    app.use('/webhooks', expressMiddleware(webhooks));
    const response = await supertest(app).post('/webhooks').set(json).send('{"trigger": ');
    expect(response.status).toBe(400);
    await settle();
    expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['invalid_json', '{"trigger": ']]);
  });

  it('a parse failure that only the raw body (not the error) kept', async () => {
    const { webhooks, errors } = recordingReceiver();
    const app = e();
    app.use((req, _res, next) => {
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = Buffer.from('{"kept":');
      next(parseFailed({}));
    });
    app.use('/webhooks', expressMiddleware(webhooks));
    expect((await supertest(app).post('/webhooks').set(json).send('{}')).status).toBe(400);
    await settle();
    expect(errors.map((error) => [error.code, Buffer.from(error.rawBody as Uint8Array).toString()])).toEqual([['invalid_json', '{"kept":']]);
  });

  it('a content coding the parser does not take: the receiver’s 415 in plain text', async () => {
    const { webhooks, errors } = recordingReceiver();
    const app = e();
    app.use(e.json());
    app.use('/webhooks', expressMiddleware(webhooks));
    const response = await supertest(app)
      .post('/webhooks')
      .set({ ...json, 'content-encoding': 'x-unknown' })
      .send('{}');
    expect(response.status).toBe(415);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type']);
  });

  it('a form with more fields than the parser allows: the receiver’s 415 (not JSON), not the parser’s page', async () => {
    const { webhooks, errors } = recordingReceiver();
    const app = e();
    app.use(e.urlencoded({ extended: false, parameterLimit: 2 }));
    app.use('/webhooks', expressMiddleware(webhooks));
    const response = await supertest(app)
      .post('/webhooks')
      .set({ authorization: AUTH, 'content-type': 'application/x-www-form-urlencoded' })
      .send('a=1&b=2&c=3');
    expect(response.status).toBe(415);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    await settle();
    expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type']);
  });
});

describe.each(Object.entries(versions))('%s: the route-behind-parser warning', (_version, e) => {
  const warnings: Array<{ message: string; code?: string }> = [];
  beforeEach(() => {
    warnings.length = 0;
    vi.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error, options?: { code?: string }) => {
      warnings.push({ message: String(warning), code: options?.code });
    }) as typeof process.emitWarning);
  });
  afterEach(() => vi.restoreAllMocks());

  const body = JSON.stringify({ trigger: 'poll_voted', data: {} });

  it('is given once, with its code, for a route behind an app-wide parser', async () => {
    const { webhooks } = recordingReceiver();
    const app = e();
    app.use(e.json());
    app.post('/webhooks', expressMiddleware(webhooks));
    for (let i = 0; i < 3; i++) expect((await supertest(app).post('/webhooks').set(json).send(body)).status).toBe(200);
    expect(warnings.map((warning) => warning.code)).toEqual(['CHAT_WEBHOOKS_ROUTE_BEHIND_PARSER']);
  });

  it('is not given for a route ahead of the parser, nor for app.use behind it', async () => {
    const { webhooks } = recordingReceiver();
    const ahead = e();
    ahead.post('/webhooks', expressMiddleware(webhooks));
    ahead.use(e.json());
    const used = e();
    used.use(e.json());
    used.use('/webhooks', expressMiddleware(webhooks));
    for (const app of [ahead, used]) expect((await supertest(app).post('/webhooks').set(json).send(body)).status).toBe(200);
    expect(warnings).toEqual([]);
  });
});

describe('the error half called directly (its type takes any `unknown` error)', () => {
  it('passes null, undefined and primitives on to next() untouched, answering nothing', async () => {
    const { webhooks, errors } = recordingReceiver();
    const [, onParseError] = expressMiddleware(webhooks);
    const passed: unknown[] = [];
    const server: Server = createServer((req, res) => {
      void (async () => {
        for (const error of [null, undefined, 'text', 7]) await onParseError(error, req, res, (next) => void passed.push(next));
        res.end(res.headersSent ? 'answered twice?' : 'untouched');
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', path: '/' }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(body));
        });
        req.on('error', reject);
        req.end('{}');
      });
      expect(text).toBe('untouched');
      expect(passed).toEqual([null, undefined, 'text', 7]);
      await settle();
      expect(errors).toEqual([]);
    } finally {
      server.close();
    }
  });
});

