/**
 * The Lambda translation on its own: which kind an event is, the node-style headers, paths and body the
 * receiver gets from it, and the result shape it answers with. Events that only look like one kind, maps with
 * holes, and statuses Node has no name for are what the handler-level suites never send.
 */
import { describe, expect, it } from 'vitest';
import { lambdaHandler, type ApiGatewayProxyEvent, type LambdaHttpEvent } from '../../adapters/lambda/index.js';
import { kindOf, toRequest, toResult } from '../../adapters/lambda/translate.js';
import { albEvent, functionUrlEvent, httpApiEvent, lambdaContext, restApiEvent } from './lambda-events.js';
import { AUTH, fixture, recordingReceiver } from './status-table.js';
import { readHeader } from '../../src/receive/http.js';

const json = { 'content-type': 'application/json', authorization: AUTH };
const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };
const NOT_HTTP = /not an HTTP request/;

/** An object typed as an event, for shapes AWS would never send. */
const asEvent = (value: unknown) => value as LambdaHttpEvent;

describe('lambda kindOf', () => {
  it('names each of the four real event formats', () => {
    expect(kindOf(restApiEvent(delivery))).toBe('v1');
    expect(kindOf(httpApiEvent(delivery))).toBe('v2');
    expect(kindOf(functionUrlEvent(delivery))).toBe('v2');
    expect(kindOf(albEvent(delivery))).toBe('alb');
    expect(kindOf(albEvent(delivery, true))).toBe('alb');
  });

  it('refuses objects that look like an HTTP event but lack its requestContext', () => {
    const { requestContext: _v2, ...v2 } = httpApiEvent(delivery);
    const { requestContext: _v1, ...v1 } = restApiEvent(delivery);
    const { requestContext: _alb, ...alb } = albEvent(delivery);
    for (const event of [v2, v1, alb, { ...v2, requestContext: null }, { ...v1, requestContext: null }, { ...v1, requestContext: 'prod' }]) {
      expect(() => kindOf(asEvent(event))).toThrow(NOT_HTTP);
    }
    expect(() => kindOf(asEvent(null))).toThrow(NOT_HTTP);
  });

  it('takes payload 2.0 only with version "2.0" and a requestContext.http.method', () => {
    const v2 = httpApiEvent(delivery);
    const { http: _http, ...contextWithoutHttp } = v2.requestContext;
    for (const event of [
      { ...v2, requestContext: contextWithoutHttp },
      { ...v2, requestContext: { ...v2.requestContext, http: { path: '/webhooks' } } },
      { ...v2, version: '1.0' },
      { ...v2, version: undefined },
    ]) {
      expect(() => kindOf(asEvent(event))).toThrow(NOT_HTTP);
    }
  });

  it('refuses a requestContext without httpMethod, and tells ALB from REST by requestContext.elb', () => {
    const { httpMethod: _method, ...noMethod } = restApiEvent(delivery);
    expect(() => kindOf(asEvent(noMethod))).toThrow(NOT_HTTP);
    expect(() => kindOf(asEvent({ ...albEvent(delivery), httpMethod: 42 }))).toThrow(NOT_HTTP);
    // An HTTP API sending payload 1.0 says so with version "1.0" and is read as REST.
    expect(kindOf({ ...restApiEvent(delivery), version: '1.0' })).toBe('v1');
  });

  it('makes the handler reject such an event with the same message', async () => {
    const { requestContext: _context, ...event } = httpApiEvent(delivery);
    await expect(lambdaHandler(recordingReceiver().webhooks)(asEvent(event), lambdaContext())).rejects.toThrow(NOT_HTTP);
  });
});

describe('lambda toRequest: paths', () => {
  const v2Under = (rawPath: string, stage: string) => {
    const event = httpApiEvent(delivery, stage);
    return { ...event, rawPath, requestContext: { ...event.requestContext, stage } };
  };

  it('offers the raw path, and without a named stage prefix when the path starts with it', () => {
    expect(toRequest(v2Under('/prod/webhooks', 'prod'), 'v2').paths).toEqual(['/prod/webhooks', '/webhooks']);
    expect(toRequest(v2Under('/prod', 'prod'), 'v2').paths).toEqual(['/prod']);
    expect(toRequest(v2Under('/$default/webhooks', '$default'), 'v2').paths).toEqual(['/$default/webhooks']);
  });

  it('strips nothing from a path under another segment of the same length as the stage', async () => {
    // "/beta" is as long as "/prod": cutting five characters without checking them would leave "/webhooks".
    expect(toRequest(v2Under('/beta/webhooks', 'prod'), 'v2').paths).toEqual(['/beta/webhooks']);
    const { webhooks, events } = recordingReceiver();
    const result = await lambdaHandler(webhooks, { path: '/webhooks' })(v2Under('/beta/webhooks', 'prod'), lambdaContext());
    expect(result.statusCode).toBe(404);
    expect(events).toEqual([]);
  });

  it('takes the stage only at the start of the path, right after its slash', () => {
    // "xprod/…" holds "prod/" one character in, as "/prod/…" does: only the leading slash tells them apart.
    expect(toRequest(v2Under('xprod/webhooks', 'prod'), 'v2').paths).toEqual(['xprod/webhooks']);
    expect(toRequest(v2Under('/prodx/webhooks', 'prod'), 'v2').paths).toEqual(['/prodx/webhooks']);
  });

  it('a hand-made HTTP API event without a stage reads it as its text, as a template would, and does not throw', () => {
    const event = httpApiEvent(delivery);
    const { stage: _stage, ...context } = event.requestContext;
    const stageless = (rawPath: string) => ({ ...event, rawPath, requestContext: context }) as unknown as Parameters<typeof toRequest>[0];
    expect(toRequest(stageless('/webhooks'), 'v2').paths).toEqual(['/webhooks']);
    expect(toRequest(stageless('/undefined/webhooks'), 'v2').paths).toEqual(['/undefined/webhooks', '/webhooks']);
  });

  it('uses `path` of REST and ALB events as it is (API Gateway already removed the stage)', () => {
    expect(toRequest(restApiEvent({ ...delivery, path: '/prod/webhooks' }), 'v1').paths).toEqual(['/prod/webhooks']);
    expect(toRequest(albEvent({ ...delivery, path: '/hooks' }), 'alb').paths).toEqual(['/hooks']);
  });
});

/** The headers the receiver gets, in order, with every own key (an `undefined` value would show). */
const headersOf = (event: LambdaHttpEvent, kind = kindOf(event)) => Object.entries(toRequest(event, kind).headers);

/** A REST event with exactly these header maps. */
function restWith(headers: ApiGatewayProxyEvent['headers'], multiValueHeaders: ApiGatewayProxyEvent['multiValueHeaders']) {
  return { ...restApiEvent(delivery), headers, multiValueHeaders };
}

describe('lambda toRequest: headers', () => {
  it('lower-cases names and gives one value as a string, repeats as an array', () => {
    const event = restWith(
      { 'Content-Type': 'application/json', 'X-Repeat': 'b' },
      { 'Content-Type': ['application/json'], 'X-Repeat': ['a', 'b'] },
    );
    expect(headersOf(event)).toEqual([
      ['content-type', 'application/json'],
      ['x-repeat', ['a', 'b']],
    ]);
  });

  it('prefers every value of multiValueHeaders over the last one in headers, whatever the spelling', () => {
    const event = restWith({ AUTHORIZATION: 'Basic last', 'x-only-single': 'one' }, { Authorization: ['Basic first', 'Basic last'] });
    expect(headersOf(event)).toEqual([
      ['authorization', ['Basic first', 'Basic last']],
      ['x-only-single', 'one'],
    ]);
  });

  it('merges names that differ only in case within multiValueHeaders', () => {
    const event = restWith(null, { 'X-Trace': ['1'], 'x-trace': ['2'] });
    expect(headersOf(event)).toEqual([['x-trace', ['1', '2']]]);
  });

  it('leaves out empty lists and missing values instead of handing on [] or undefined', () => {
    const event = restWith(
      { 'X-Undefined': undefined, 'Content-Type': 'application/json' },
      { 'X-Empty': [], 'X-Missing': undefined, 'Content-Type': ['application/json'] },
    );
    expect(headersOf(event)).toEqual([['content-type', 'application/json']]);
    // An empty list in multiValueHeaders is the header's whole story: the other map cannot bring it back.
    expect(headersOf(restWith({ 'X-Gone': 'value' }, { 'X-Gone': [] }))).toEqual([]);
  });

  it('takes maps that are null or absent', () => {
    expect(headersOf(restWith(null, null))).toEqual([]);
    expect(headersOf(restWith(undefined as never, undefined as never))).toEqual([]);
    expect(readHeader(toRequest(restWith({ Host: 'example.com' }, null), 'v1').headers, 'host')).toBe('example.com');
  });

  it('answers a REST delivery whose multiValueHeaders has a null entry as usual', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const event = restApiEvent(delivery);
    event.multiValueHeaders = { ...event.multiValueHeaders, 'X-Nothing': null as unknown as string[] };
    expect((await lambdaHandler(webhooks)(event, lambdaContext())).statusCode).toBe(200);
    expect(events).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('takes a null header value as an absent header', async () => {
    const { webhooks, events } = recordingReceiver();
    const event = restApiEvent(delivery);
    event.headers = { ...event.headers, 'Content-Encoding': null as unknown as string };
    event.multiValueHeaders = null as never;
    expect((await lambdaHandler(webhooks)(event, lambdaContext())).statusCode).toBe(200);
    expect(events).toHaveLength(1);
  });

  it('reads single-value ALB and HTTP API headers, whatever their case', () => {
    // Passed on as they are (no copy per invocation): the receiver reads names in any letter case.
    const alb = toRequest({ ...albEvent(delivery), headers: { 'Content-Type': 'application/json', Authorization: AUTH } }, 'alb');
    expect(readHeader(alb.headers, 'content-type')).toBe('application/json');
    expect(readHeader(alb.headers, 'authorization')).toBe(AUTH);
    expect(readHeader(alb.headers, 'content-encoding')).toBeUndefined();
    const v2 = toRequest({ ...httpApiEvent(delivery), headers: { 'X-Joined': 'a,b' } }, 'v2');
    expect(readHeader(v2.headers, 'x-joined')).toBe('a,b');
  });
});

describe('lambda toRequest: body', () => {
  it('reads a missing, null or empty body as the empty string, base64 or not', async () => {
    const rest = restApiEvent({ method: 'POST', headers: json });
    expect(rest.body).toBeNull();
    const v2 = httpApiEvent({ method: 'POST', headers: json });
    expect(v2).not.toHaveProperty('body');
    const alb = albEvent({ method: 'POST', headers: json });
    expect(alb.body).toBe('');
    for (const event of [rest, v2, alb, { ...rest, isBase64Encoded: true }, { ...alb, isBase64Encoded: true }]) {
      expect(await toRequest(event, kindOf(event)).body(4096)).toBe('');
    }
  });

  it('hands onError an empty raw body for an empty delivery, from every kind', async () => {
    for (const event of [
      restApiEvent({ method: 'POST', headers: json }),
      httpApiEvent({ method: 'POST', headers: json }),
      albEvent({ method: 'POST', headers: json }, true),
    ]) {
      const { webhooks, errors } = recordingReceiver();
      expect((await lambdaHandler(webhooks)(event, lambdaContext())).statusCode).toBe(400);
      expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
      expect(errors[0]?.rawBody).toBe('');
    }
  });

  it('returns a plain body as the string it is and decodes a base64 one to bytes', async () => {
    const plain = restApiEvent({ ...delivery, body: 'héllo' });
    expect(await toRequest(plain, 'v1').body(4096)).toBe('héllo');
    const encoded = restApiEvent({ ...delivery, body: 'héllo', base64: true });
    expect(Buffer.from((await toRequest(encoded, 'v1').body(4096)) as Uint8Array).toString('utf8')).toBe('héllo');
  });
});

describe('lambda toResult', () => {
  const response = (status: number) => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }, body: 'x' });

  it('gives ALB a statusDescription of the bare code when Node has no name for the status', () => {
    const result = toResult(albEvent(delivery), 'alb', response(599));
    expect(result).toEqual({
      statusCode: 599,
      statusDescription: '599',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'x',
      isBase64Encoded: false,
    });
  });

  it('names a known status in the ALB statusDescription and drops Connection from every shape', () => {
    expect(toResult(albEvent(delivery, true), 'alb', response(413))).toEqual({
      statusCode: 413,
      statusDescription: '413 Payload Too Large',
      multiValueHeaders: { 'content-type': ['text/plain; charset=utf-8'] },
      body: 'x',
      isBase64Encoded: false,
    });
    expect(toResult(restApiEvent(delivery), 'v1', response(413)).headers).toEqual({ 'content-type': 'text/plain; charset=utf-8' });
    expect(toResult(httpApiEvent(delivery), 'v2', response(413)).headers).toEqual({ 'content-type': 'text/plain; charset=utf-8' });
  });
});
