/**
 * When something ahead of the adapter has already answered (a timeout middleware, an app that responds and
 * still calls next()), the receiver's answer is dropped: writing a second head would throw
 * ERR_HTTP_HEADERS_SENT into the app's error handler (Express) or as an unhandled rejection (node).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { AUTH, fixture, recordingReceiver, settle } from './status-table.js';

type Ahead = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

const aheads: Record<string, Ahead> = {
  'answered and ended': (_req, res, next) => {
    res.writeHead(202, { 'content-type': 'text/plain' });
    res.end('taken');
    next();
  },
  'head sent, body still being written': (_req, res, next) => {
    res.writeHead(202, { 'content-type': 'text/plain' });
    res.flushHeaders();
    res.write('tak');
    next();
    setTimeout(() => res.end('en'), 50);
  },
};

const mounts = {
  nodeMiddleware: (app: express.Express, webhooks: ReturnType<typeof recordingReceiver>['webhooks']) =>
    app.use(nodeMiddleware(webhooks, { path: '/webhooks' })),
  expressMiddleware: (app: express.Express, webhooks: ReturnType<typeof recordingReceiver>['webhooks']) =>
    app.use('/webhooks', expressMiddleware(webhooks)),
};

let rejections: unknown[] = [];
const onRejection = (reason: unknown) => void rejections.push(reason);
beforeEach(() => {
  rejections = [];
  process.on('unhandledRejection', onRejection);
});
afterEach(() => void process.off('unhandledRejection', onRejection));

for (const [mountName, mount] of Object.entries(mounts)) {
  describe(`${mountName} after a middleware that already answered`, () => {
    for (const [aheadName, ahead] of Object.entries(aheads)) {
      it(`${aheadName}: the client gets the app's answer, and nothing throws`, async () => {
        const { webhooks, events } = recordingReceiver();
        const app = express();
        const appErrors: unknown[] = [];
        app.use(ahead);
        mount(app, webhooks);
        app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
          appErrors.push(error);
          res.destroy();
        });
        const response = await supertest(app)
          .post('/webhooks')
          .set({ 'content-type': 'application/json', authorization: AUTH })
          .send(fixture('message_sent'));
        expect(response.status).toBe(202);
        expect(response.text).toBe('taken');
        await settle();
        // The delivery itself was taken: only the answer was the app's.
        expect(events).toHaveLength(1);
        expect(appErrors).toEqual([]);
        expect(rejections).toEqual([]);
      });
    }
  });
}
