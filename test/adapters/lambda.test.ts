import { describe, expect, it } from 'vitest';
import {
  lambdaHandler,
  type AlbResult,
  type LambdaHandlerOptions,
  type LambdaHttpEvent,
  type LambdaHttpResult,
} from '../../adapters/lambda/index.js';
import type { Webhooks } from '../../src/index.js';
import {
  albEvent,
  functionUrlEvent,
  httpApiEvent,
  lambdaContext,
  restApiEvent,
  titleCase,
  type EventInput,
} from './lambda-events.js';
import {
  AUTH,
  LIMIT,
  fixture,
  recordingReceiver,
  settle,
  statusTableSuite,
  type ReceivedResponse,
  type Send,
  type SentRequest,
} from './status-table.js';

type Build = (input: EventInput) => LambdaHttpEvent;

/** Alternates the spelling of header names, as different senders through API Gateway v1 would. */
const oddCase = (name: string) => (name.length % 2 ? name.toUpperCase() : titleCase(name));

const kinds: Record<string, Build> = {
  'REST API (payload 1.0)': (input) => restApiEvent(input),
  'REST API (payload 1.0, odd header case)': (input) => restApiEvent(input, oddCase),
  'HTTP API (payload 2.0)': (input) => httpApiEvent(input),
  'function URL': (input) => functionUrlEvent(input),
  ALB: (input) => albEvent(input),
  'ALB (multi-value headers)': (input) => albEvent(input, true),
};

/** What the client sees, from whichever result shape the kind uses. */
function received(result: LambdaHttpResult): ReceivedResponse {
  const headers: Record<string, string | undefined> = {};
  const multi = (result as AlbResult).multiValueHeaders;
  if (multi) for (const [name, values] of Object.entries(multi)) headers[name.toLowerCase()] = values.join(', ');
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = value;
  return { status: result.statusCode, headers, body: result.body };
}

function sender(webhooks: Webhooks, build: Build, base64: boolean, options?: LambdaHandlerOptions): Send {
  const handler = lambdaHandler(webhooks, options);
  return async (request: SentRequest) => received(await handler(build({ ...request, base64 }), lambdaContext()));
}

for (const [kind, build] of Object.entries(kinds)) {
  for (const base64 of [false, true]) {
    statusTableSuite(`lambda ${kind}${base64 ? ', base64 body' : ''}`, async (webhooks) => ({
      send: sender(webhooks, build, base64),
    }));
  }
}

const json = { 'content-type': 'application/json', authorization: AUTH };
const TEXT = 'Grüße 👋🏽 こんにちは 你好 안녕하세요 — ñ';

describe('lambda result shapes', () => {
  const handler = lambdaHandler(recordingReceiver().webhooks);
  const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };

  it('answers API Gateway v1 with statusCode, headers, body and isBase64Encoded: false', async () => {
    const result = await handler(restApiEvent(delivery), lambdaContext());
    expect(result).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'OK',
      isBase64Encoded: false,
    });
  });

  it('answers HTTP API v2 and function URLs with statusCode, headers and body', async () => {
    for (const event of [httpApiEvent(delivery), functionUrlEvent(delivery)]) {
      expect(await handler(event, lambdaContext())).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'OK',
      });
    }
  });

  it('answers ALB with a statusDescription and single-value headers', async () => {
    const result = await handler(albEvent(delivery), lambdaContext());
    expect(result).toEqual({
      statusCode: 200,
      statusDescription: '200 OK',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'OK',
      isBase64Encoded: false,
    });
  });

  it('answers an ALB multiValueHeaders-only event with multiValueHeaders and no headers', async () => {
    const { webhooks, events } = recordingReceiver();
    const event = albEvent(delivery, true);
    expect(event).not.toHaveProperty('headers');
    const result = await lambdaHandler(webhooks)(event, lambdaContext());
    expect(result).toEqual({
      statusCode: 200,
      statusDescription: '200 OK',
      multiValueHeaders: { 'content-type': ['text/plain; charset=utf-8'] },
      body: 'OK',
      isBase64Encoded: false,
    });
    expect(events).toHaveLength(1);
    const unauthorized = await lambdaHandler(webhooks)(albEvent({ ...delivery, headers: {} }, true), lambdaContext());
    expect(unauthorized).toMatchObject({
      statusCode: 401,
      statusDescription: '401 Unauthorized',
      multiValueHeaders: { 'www-authenticate': ['Basic realm="webhooks"'] },
    });
  });

  it('drops the hop-by-hop Connection header (there is no connection behind Lambda)', async () => {
    const { webhooks } = recordingReceiver();
    const result = await lambdaHandler(webhooks)(
      restApiEvent({ method: 'POST', headers: { ...json, 'content-length': String(LIMIT + 1) }, body: '{}' }),
      lambdaContext(),
    );
    expect(result.statusCode).toBe(413);
    expect(result.headers).not.toHaveProperty('connection');
  });
});

describe('lambda request translation', () => {
  it('decodes a base64 body to bytes so emoji and CJK text arrive intact, for every kind', async () => {
    const event = JSON.parse(fixture('message_sent'));
    event.data.message.data.text = TEXT;
    for (const [kind, build] of Object.entries(kinds)) {
      const { webhooks, events } = recordingReceiver();
      const built = build({ method: 'POST', headers: json, body: JSON.stringify(event), base64: true });
      expect(built.isBase64Encoded, kind).toBe(true);
      expect(Buffer.from(built.body as string, 'base64').toString('utf8')).toContain(TEXT);
      expect((await lambdaHandler(webhooks)(built, lambdaContext())).statusCode, kind).toBe(200);
      expect((events[0] as { data: { message: { data: { text: string } } } } | undefined)?.data.message.data.text, kind).toBe(TEXT);
    }
  });

  it('answers 413 to a base64 body one byte over the limit without a Content-Length', async () => {
    for (const build of [(i: EventInput) => restApiEvent(i), (i: EventInput) => albEvent(i, true)]) {
      const { webhooks, errors } = recordingReceiver();
      const body = Buffer.alloc(LIMIT + 1, 0x20);
      const event = build({ method: 'POST', headers: json, body, base64: true, contentLength: false });
      expect(JSON.stringify(event)).not.toMatch(/content-length/i);
      expect((await lambdaHandler(webhooks)(event, lambdaContext())).statusCode).toBe(413);
      expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
    }
  });

  it('sees every value of a header repeated in multiValueHeaders (a second Authorization is refused)', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const event = restApiEvent({ method: 'POST', headers: json, body: fixture('message_sent') });
    event.multiValueHeaders = { ...event.multiValueHeaders, Authorization: [AUTH, 'Basic Zm9vOmJhcg=='] };
    const result = await lambdaHandler(webhooks)(event, lambdaContext());
    expect(result.statusCode).toBe(401);
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['unauthorized']);
  });

  it('answers 404 to another path, and matches an HTTP API path under a named stage', async () => {
    const { webhooks, events } = recordingReceiver();
    const handler = lambdaHandler(webhooks, { path: '/webhooks' });
    const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };
    // Distinct deliveries, so that repeats are not answered by the dedupe window.
    const nth = (n: number) => ({ ...delivery, body: fixture('message_sent').replace('"1421"', `"${n}"`) });
    for (const event of [
      restApiEvent({ ...delivery, path: '/other' }),
      httpApiEvent({ ...delivery, path: '/other' }),
      functionUrlEvent({ ...delivery, path: '/other' }),
      albEvent({ ...delivery, path: '/other' }),
    ]) {
      expect((await handler(event, lambdaContext())).statusCode).toBe(404);
    }
    expect(events).toEqual([]);
    for (const event of [restApiEvent(nth(1)), httpApiEvent(nth(2), 'prod'), functionUrlEvent(nth(3)), albEvent(nth(4))]) {
      expect((await handler(event, lambdaContext())).statusCode).toBe(200);
    }
    expect(events).toHaveLength(4);
  });

  it('rejects an event that is not an HTTP request', async () => {
    const handler = lambdaHandler(recordingReceiver().webhooks);
    const sqs = { Records: [{ messageId: '059f36b4', body: 'hi', eventSource: 'aws:sqs' }] };
    await expect(handler(sqs as unknown as LambdaHttpEvent, lambdaContext())).rejects.toThrow(
      new TypeError(
        'lambdaHandler got an event that is not an HTTP request: expected one from an API Gateway REST or HTTP API, ' +
          'a function URL or an Application Load Balancer.',
      ),
    );
  });
});

describe('lambda handler timing', () => {
  const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };

  it('is an async function of exactly (event, context)', () => {
    const handler = lambdaHandler(recordingReceiver().webhooks);
    expect(handler.length).toBe(2);
    expect(handler(httpApiEvent(delivery), lambdaContext())).toBeInstanceOf(Promise);
  });

  it('runs the handlers before the result comes back', async () => {
    const { webhooks } = recordingReceiver();
    let finished = false;
    webhooks.on('message_sent', async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      finished = true;
    });
    const result = await lambdaHandler(webhooks)(httpApiEvent(delivery), lambdaContext());
    expect(result.statusCode).toBe(200);
    expect(finished).toBe(true);
  });

  it('reports onError of a refused request before the result comes back', async () => {
    const { webhooks } = recordingReceiver();
    const codes: string[] = [];
    webhooks.onError(async (error) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      codes.push(error.code);
    });
    const result = await lambdaHandler(webhooks)(httpApiEvent({ ...delivery, headers: {} }), lambdaContext());
    expect(result.statusCode).toBe(401);
    expect(codes).toEqual(['unauthorized']);
  });

  it('answers 200 within the time budget when a handler never settles, reporting handler_timeout', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const started = Date.now();
    const result = await lambdaHandler(webhooks, { timeBudgetMs: 100 })(restApiEvent(delivery), lambdaContext());
    const elapsed = Date.now() - started;
    expect(result.statusCode).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(400);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('never waits longer than the invocation has left, minus a safety margin', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const started = Date.now();
    // 500 ms left: the default 1500 ms budget must shrink to well under 500 ms.
    const result = await lambdaHandler(webhooks)(functionUrlEvent(delivery), lambdaContext(500));
    const elapsed = Date.now() - started;
    expect(result.statusCode).toBe(200);
    expect(elapsed).toBeLessThan(450);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('refuses a time budget that is not a positive number', () => {
    const { webhooks } = recordingReceiver();
    expect(() => lambdaHandler(webhooks, { timeBudgetMs: 0 })).toThrow(/timeBudgetMs/);
  });
});

describe('lambda enqueue mode', () => {
  const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };

  it('hands each accepted event to enqueue once and runs no handler', async () => {
    const { webhooks, events } = recordingReceiver();
    const queued: unknown[] = [];
    const handler = lambdaHandler(webhooks, { enqueue: async (event) => void queued.push(event) });
    expect((await handler(albEvent(delivery), lambdaContext())).statusCode).toBe(200);
    expect((await handler(httpApiEvent({ ...delivery, headers: {} }), lambdaContext())).statusCode).toBe(401);
    const unknownTrigger = '{"trigger":"poll_voted","data":{"poll":{"id":"7"}}}';
    expect((await handler(restApiEvent({ ...delivery, body: unknownTrigger }), lambdaContext())).statusCode).toBe(200);
    await settle();
    expect(queued.map((event) => (event as { trigger: string }).trigger)).toEqual(['message_sent', 'poll_voted']);
    expect(events).toEqual([]);
  });

  it('answers only once enqueue resolved', async () => {
    const { webhooks } = recordingReceiver();
    let resolved = false;
    const handler = lambdaHandler(webhooks, {
      enqueue: () => new Promise((resolve) => setTimeout(() => resolve((resolved = true)), 50)),
    });
    expect((await handler(httpApiEvent(delivery), lambdaContext())).statusCode).toBe(200);
    expect(resolved).toBe(true);
  });

  it('answers 503 with Retry-After when enqueue rejects', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const handler = lambdaHandler(webhooks, { enqueue: () => Promise.reject(new Error('SQS is down')) });
    const result = await handler(functionUrlEvent(delivery), lambdaContext());
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after']).toBeDefined();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['enqueue_failed']);
  });
});
