/**
 * What `bodyOf` makes of the bodies parsers leave, through real Express 5 and Express 4 apps (the same code
 * serves nodeMiddleware in a connect-style stack and expressMiddleware): a raw body kept as text rather than
 * a Buffer, and the JSON values other than objects that `express.json({ strict: false })` lets through.
 */
import type { IncomingMessage } from 'node:http';
import express5 from 'express';
import express4 from 'express4';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import type { Webhooks } from '../../src/index.js';
import { sendChunked } from './servers.js';
import { AUTH, LIMIT, messageOfSize, recordingReceiver, settle } from './status-table.js';

type Express = typeof express5;
const versions: Record<string, Express> = { 'Express 5': express5, 'Express 4': express4 as unknown as Express };
const mounts = {
  expressMiddleware: (webhooks: Webhooks) => expressMiddleware(webhooks, { path: '/webhooks' }),
  nodeMiddleware: (webhooks: Webhooks) => nodeMiddleware(webhooks, { path: '/webhooks' }),
};
const json = { 'content-type': 'application/json', authorization: AUTH };

/** The raw body kept as text, as some signature-checking recipes do (`buf.toString()`). */
const keepRawText = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
  (req as IncomingMessage & { rawBody?: string }).rawBody = buffer.toString('utf8');
};


for (const [version, e] of Object.entries(versions)) {
  for (const [mountName, mount] of Object.entries(mounts)) {
    describe(`${version}, ${mountName}: bodies parsers leave`, () => {
      it('measures a chunked body against the limit when the raw body was kept as text', async () => {
        const { webhooks, events, errors } = recordingReceiver();
        const app = e();
        app.use(e.json({ limit: '10mb', verify: keepRawText }));
        app.use(mount(webhooks));
        expect((await sendChunked(app, '/webhooks', json, messageOfSize(LIMIT + 1))).status).toBe(413);
        expect((await sendChunked(app, '/webhooks', json, messageOfSize(LIMIT))).status).toBe(200);
        await settle();
        expect(events).toHaveLength(1);
        expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
      });

      it('hands onError an empty raw body, not the `{}` express.json made of an empty one', async () => {
        const app = e();
        app.use(e.json());
        const { webhooks, errors } = recordingReceiver();
        app.use(mount(webhooks));
        const response = await supertest(app).post('/webhooks').set({ ...json, 'content-length': '0' }).send('');
        expect(response.status).toBe(400);
        await settle();
        expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['invalid_json', '']]);
      });

      it('a body something read without leaving anything is empty, not a wait on the ended stream', async () => {
        const app = e();
        // A middleware that consumes the stream (a logger, a digest) and leaves no req.body.
        app.use((req: IncomingMessage, _res: unknown, next: () => void) => {
          req.resume();
          req.on('end', () => next());
        });
        const { webhooks, errors } = recordingReceiver();
        app.use(mount(webhooks));
        const response = await supertest(app).post('/webhooks').set(json).send('{"trigger":"message_sent"}');
        expect(response.status).toBe(400);
        await settle();
        expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['invalid_json', '']]);
      });

      it('answers JSON that is not an object (null, a number, true, an array) 400 invalid_envelope, raw text reported', async () => {
        const app = e();
        app.use(e.json({ strict: false }));
        const { webhooks, errors } = recordingReceiver();
        app.use(mount(webhooks));
        for (const body of ['null', '42', 'true', '[1]']) {
          const response = await supertest(app).post('/webhooks').set(json).send(body);
          expect(response.status, body).toBe(400);
        }
        await settle();
        expect(errors.map((error) => [error.code, error.rawBody])).toEqual([
          ['invalid_envelope', 'null'],
          ['invalid_envelope', '42'],
          ['invalid_envelope', 'true'],
          ['invalid_envelope', '[1]'],
        ]);
      });

      it('answers a JSON string body ("text") 400 invalid_envelope with its JSON text, as every other adapter does', async () => {
        const app = e();
        app.use(e.json({ strict: false }));
        const { webhooks, errors } = recordingReceiver();
        app.use(mount(webhooks));
        for (const body of ['"text"', '"{\\"trigger\\":\\"message_sent\\",\\"data\\":{}}"', '"é"']) {
          const response = await supertest(app).post('/webhooks').set(json).send(body);
          expect(response.status, body).toBe(400);
        }
        await settle();
        expect(errors.map((error) => [error.code, error.rawBody])).toEqual([
          ['invalid_envelope', '"text"'],
          ['invalid_envelope', '"{\\"trigger\\":\\"message_sent\\",\\"data\\":{}}"'],
          ['invalid_envelope', '"é"'],
        ]);
      });

      it('still takes text a text parser kept for JSON as the body itself, quotes and all', async () => {
        const app = e();
        app.use(e.text({ type: 'application/json' }));
        const { webhooks, errors } = recordingReceiver();
        app.use(mount(webhooks));
        const response = await supertest(app).post('/webhooks').set(json).send('"text"');
        expect(response.status).toBe(400);
        await settle();
        expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['invalid_envelope', '"text"']]);
      });
    });
  }
}
