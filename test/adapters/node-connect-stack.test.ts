/**
 * nodeMiddleware in a connect-style stack (Express used as one) behind body parsers that already read the
 * stream: it works from what the parser left instead of waiting on (or reading as empty) a consumed stream.
 */
import express from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { nodeMiddleware } from '../../adapters/node/index.js';
import type { Webhooks } from '../../src/index.js';
import { AUTH, fixture, recordingReceiver, settle, statusTableSuite, type Send } from './status-table.js';

function stack(webhooks: Webhooks, parser: express.RequestHandler): Send {
  const app = express();
  app.use(parser);
  app.use(nodeMiddleware(webhooks, { path: '/webhooks' }));
  return async ({ method, headers, body }) => {
    const test = supertest(app)
      [method.toLowerCase() as 'post']('/webhooks')
      .set(headers)
      .serialize((data: unknown) => data as string);
    const response = await (body === undefined ? test : test.send(body));
    return { status: response.status, headers: response.headers, body: response.text };
  };
}

// Parsers that never refuse a body: the whole status table holds.
statusTableSuite("nodeMiddleware in a connect-style stack behind express.raw({ type: '*/*' })", async (webhooks) => ({
  send: stack(webhooks, express.raw({ type: '*/*' })),
}));
statusTableSuite("nodeMiddleware in a connect-style stack behind express.text({ type: '*/*' })", async (webhooks) => ({
  send: stack(webhooks, express.text({ type: '*/*' })),
}));

describe('nodeMiddleware behind express.json() in a connect-style stack', () => {
  it('answers a valid delivery 200 and dispatches it (it used to read the consumed stream as empty: 400)', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const send = stack(webhooks, express.json());
    const response = await send({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') });
    expect(response.status).toBe(200);
    await settle();
    expect(events).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
