/** Lambda edges: stage prefixes, base64 bodies at and past the limit, budgets, an onError that never settles. */
import { describe, expect, it, vi } from 'vitest';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { httpApiEvent, lambdaContext, restApiEvent } from './lambda-events.js';
import { AUTH, LIMIT, fixture, messageOfSize, recordingReceiver } from './status-table.js';

const json = { 'content-type': 'application/json', authorization: AUTH };
const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };

describe('lambda: HTTP API stage prefix', () => {
  it('strips a named stage only as a whole first segment', async () => {
    const { webhooks, events } = recordingReceiver();
    const handler = lambdaHandler(webhooks, { path: '/webhooks' });
    const under = (rawPath: string, stage: string) => {
      const event = httpApiEvent(delivery, stage);
      return { ...event, rawPath, requestContext: { ...event.requestContext, stage } };
    };
    expect((await handler(under('/prod/webhooks', 'prod'), lambdaContext())).statusCode).toBe(200);
    expect((await handler(under('/production/webhooks', 'prod'), lambdaContext())).statusCode).toBe(404);
    expect((await handler(under('/prodwebhooks', 'prod'), lambdaContext())).statusCode).toBe(404);
    // The $default stage adds no prefix: a path that merely starts with it is not stripped.
    expect((await handler(under('/$default/webhooks', '$default'), lambdaContext())).statusCode).toBe(404);
    expect((await handler(under('/webhooks', '$default'), lambdaContext())).statusCode).toBe(200);
    expect(events).toHaveLength(1); // the second 200 is a repeat of the first delivery
  });
});

describe('lambda: base64 bodies', () => {
  it('takes a base64 body of exactly the limit and refuses one byte more', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const handler = lambdaHandler(webhooks);
    const exact = restApiEvent({ ...delivery, body: messageOfSize(LIMIT), base64: true, contentLength: false });
    expect((await handler(exact, lambdaContext())).statusCode).toBe(200);
    const over = restApiEvent({ ...delivery, body: messageOfSize(LIMIT + 1), base64: true, contentLength: false });
    expect((await handler(over, lambdaContext())).statusCode).toBe(413);
    expect(events).toHaveLength(1);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('decodes no more of a huge base64 body than the limit needs', async () => {
    const { webhooks } = recordingReceiver();
    const huge = restApiEvent({ ...delivery, body: Buffer.alloc(16 * 1024 * 1024, 0x20), base64: true, contentLength: false });
    const decoded: number[] = [];
    const from = Buffer.from.bind(Buffer);
    const spy = vi.spyOn(Buffer, 'from').mockImplementation(((value: unknown, encoding?: BufferEncoding) => {
      if (typeof value === 'string' && encoding === 'base64') decoded.push(value.length);
      return from(value as string, encoding);
    }) as typeof Buffer.from);
    try {
      expect((await lambdaHandler(webhooks)(huge, lambdaContext())).statusCode).toBe(413);
    } finally {
      spy.mockRestore();
    }
    // Every 4 base64 characters carry 3 bytes: enough for one byte past the limit, not the 16 MiB (the
    // Authorization header's credentials are the other, short, base64 text decoded).
    expect(Math.max(...decoded)).toBe(Math.ceil((LIMIT + 1) / 3) * 4);
  });
});

describe('lambda: budgets', () => {
  it('refuses a time budget of Infinity, NaN or below zero', () => {
    const { webhooks } = recordingReceiver();
    for (const timeBudgetMs of [Infinity, Number.NaN, -5]) {
      expect(() => lambdaHandler(webhooks, { timeBudgetMs })).toThrow(/timeBudgetMs/);
    }
  });

  it('returns within the budget even when onError itself never settles', async () => {
    const { webhooks } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    webhooks.onError(() => new Promise(() => undefined));
    const started = Date.now();
    const result = await lambdaHandler(webhooks, { timeBudgetMs: 80 })(restApiEvent(delivery), lambdaContext());
    expect(result.statusCode).toBe(200);
    // The budget, then the adapter's grace for the receiver's own timeout: never the onError's forever.
    expect(Date.now() - started).toBeLessThan(400);
  });
});
