/**
 * `lambdaHandler(webhooks)` as @types/aws-lambda types it (issue 38, item 3): assignable to
 * `APIGatewayProxyHandler`, `APIGatewayProxyHandlerV2` and `ALBHandler` (and a function URL's, which is
 * `APIGatewayProxyHandlerV2`), one handler for all four event kinds. tsc checks the assignments (`npm run
 * typecheck`, and the commit checks); each was TS2322 before. The calls run the handler on each kind of event.
 */
import type {
  ALBEvent,
  ALBHandler,
  ALBResult,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyResult,
  APIGatewayProxyStructuredResultV2,
  Context,
  LambdaFunctionURLHandler,
} from 'aws-lambda';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { createWebhooks } from '../../src/index.js';
import { albEvent, httpApiEvent, restApiEvent, type EventInput } from './lambda-events.js';
import { fixture } from './status-table.js';

const webhooks = createWebhooks({ auth: false, logger: {} });
const handler = lambdaHandler(webhooks);
const context = { getRemainingTimeInMillis: () => 10_000 } as Context;
const noCallback = () => undefined;
const delivery = (): EventInput => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: fixture('message_sent') });

describe('lambdaHandler and @types/aws-lambda', () => {
  it('is an APIGatewayProxyHandler (REST API, payload 1.0)', async () => {
    const rest: APIGatewayProxyHandler = handler;
    const result = await rest(restApiEvent(delivery()) as unknown as APIGatewayProxyEvent, context, noCallback);
    expect(result).toMatchObject({ statusCode: 200 });
    expectTypeOf(handler).toBeCallableWith({} as APIGatewayProxyEvent, context);
    expectTypeOf(() => handler({} as APIGatewayProxyEvent, context)).returns.resolves.toMatchTypeOf<APIGatewayProxyResult>();
  });

  it('is an APIGatewayProxyHandlerV2 (HTTP API, payload 2.0) and a LambdaFunctionURLHandler', async () => {
    const http: APIGatewayProxyHandlerV2 = handler;
    const url: LambdaFunctionURLHandler = handler;
    const result = await http(httpApiEvent(delivery()) as unknown as APIGatewayProxyEventV2, context, noCallback);
    expect(result).toMatchObject({ statusCode: 200 });
    expect(typeof url).toBe('function');
    expectTypeOf(() => handler({} as APIGatewayProxyEventV2, context)).returns.resolves.toMatchTypeOf<APIGatewayProxyStructuredResultV2>();
  });

  it('is an ALBHandler', async () => {
    const alb: ALBHandler = handler;
    const result = await alb(albEvent(delivery()) as unknown as ALBEvent, context, noCallback);
    expect(result).toMatchObject({ statusCode: 200, statusDescription: '200 OK' });
    expectTypeOf(() => handler({} as ALBEvent, context)).returns.resolves.toMatchTypeOf<ALBResult>();
  });
});
