/**
 * chat-webhooks/hono at its edges, in a real Hono app where Hono can produce the case (a body cache holding
 * what a middleware put there) and with a hand-made context where only another host or an older Hono would
 * (no `bodyCache`, an empty `routePath`): the answer is what the receiver says, never a crash of the adapter.
 */
import { SpanKind } from '@opentelemetry/api';
import { Hono, type MiddlewareHandler } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { honoHandler, type HonoContext } from '../../adapters/hono/index.js';
import { createWebhooks, type HandleOptions, type WebhookError, type Webhooks } from '../../src/index.js';
import { sdk, waitFor } from '../telemetry/sdk.js';
import { AUTH, fixture, LIMIT, PASSWORD, USER } from './status-table.js';

const headers = { 'content-type': 'application/json', authorization: AUTH };
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function receiver(options: Parameters<typeof createWebhooks>[0] = { auth: { username: USER, password: PASSWORD } }) {
  const webhooks = createWebhooks({ maxBodyBytes: LIMIT, logLevel: 'silent', ...options });
  closers.push(() => webhooks.close());
  const errors: WebhookError[] = [];
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, errors };
}

/** A context as a host other than Hono's own dispatch may give it: no execution context, Hono's getter throwing. */
function context(req: HonoContext['req']): HonoContext {
  return {
    req,
    get executionCtx(): never {
      throw new Error('This context has no ExecutionContext');
    },
  };
}

async function spentRequest(): Promise<Request> {
  const raw = new Request('https://hooks.example.com/webhooks', { method: 'POST', headers, body: fixture('message_sent') });
  await raw.text();
  return raw;
}

const BODY_UNAVAILABLE =
  'The request body was read before honoHandler ran and Hono kept none of it (read through c.req.raw, or as form data). ' +
  'Read it with c.req.json(), c.req.text() or c.req.arrayBuffer() in middleware instead. Answered 500 so that the platform delivers it again.';

describe('a body already read', () => {
  it('without a body cache at all (not Hono 4’s request): 500 body_unavailable with the whole explanation', async () => {
    const { webhooks, errors } = receiver();
    const response = await honoHandler(webhooks, { awaitHandlers: true })(context({ raw: await spentRequest() }));
    expect(response.status).toBe(500);
    expect(await response.text()).toContain(BODY_UNAVAILABLE);
    expect(errors.map((error) => [error.code, error.message])).toEqual([['body_unavailable', BODY_UNAVAILABLE]]);
  });

  it('a parsed-JSON cache holding nothing is an empty body: 400, as the sender’s', async () => {
    const { webhooks, errors } = receiver();
    const app = new Hono();
    const nothing: MiddlewareHandler = async (c, next) => {
      await c.req.raw.text();
      c.req.bodyCache.json = Promise.resolve(undefined);
      await next();
    };
    app.use('/webhooks', nothing);
    app.post('/webhooks', honoHandler(webhooks, { awaitHandlers: true }));
    const response = await app.request('/webhooks', { method: 'POST', headers, body: fixture('message_sent') });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/the body is empty/);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });
});

it('names itself when it refuses an option', () => {
  expect(() => honoHandler(receiver().webhooks, { awaitHandler: true } as never)).toThrow(/^Unknown option "awaitHandler" for honoHandler\./);
});

describe('the route given to the receiver', () => {
  /** The receiver, recording the options honoHandler passes with each request. */
  function recording(webhooks: Webhooks) {
    const passed: HandleOptions[] = [];
    const handle = webhooks.handle.bind(webhooks);
    const wrapped = Object.create(webhooks) as Webhooks;
    wrapped.handle = (request, options) => {
      passed.push(options as HandleOptions);
      return handle(request, options);
    };
    return { wrapped, passed };
  }

  it('is the pattern Hono matched, one options object per pattern: the same object while the pattern stays', async () => {
    const { webhooks } = receiver();
    const { wrapped, passed } = recording(webhooks);
    const app = new Hono();
    const handler = honoHandler(wrapped, { handlerTimeoutMs: 50 });
    app.post('/a/:id', handler);
    app.post('/b', handler);
    for (const path of ['/a/1', '/a/2', '/b', '/b', '/a/3']) {
      expect((await app.request(path, { method: 'POST', headers, body: fixture('message_sent') })).status).toBe(200);
    }
    expect(passed.map((options) => options.route)).toEqual(['/a/:id', '/a/:id', '/b', '/b', '/a/:id']);
    expect(passed.every((options) => options.handlerTimeoutMs === 50)).toBe(true);
    expect(passed[1]).toBe(passed[0]);
    expect(passed[3]).toBe(passed[2]);
    expect(passed[2]).not.toBe(passed[1]);
  });

  it('without a pattern (a hand-made context), the options without a route, the same object before and after a routed request', async () => {
    const { webhooks } = receiver();
    const { wrapped, passed } = recording(webhooks);
    const handler = honoHandler(wrapped);
    const delivery = () => new Request('https://hooks.example.com/x', { method: 'POST', headers, body: fixture('message_sent') });
    for (const routePath of [undefined, '/a', undefined]) {
      expect((await handler(context({ raw: delivery(), bodyCache: {}, ...(routePath ? { routePath } : {}) }))).status).toBe(200);
    }
    expect(passed.map((options) => Object.keys(options))).toEqual([[], ['route'], []]);
    expect(passed[2]).toBe(passed[0]);
  });

  it('an empty routePath is no route: openTelemetry’s route names the span', async () => {
    const otel = sdk({ route: '/configured' });
    closers.push(() => otel.shutdown());
    const { webhooks } = receiver({ auth: false, telemetry: otel.telemetry });
    const handler = honoHandler(webhooks, { awaitHandlers: true });
    const raw = new Request('https://hooks.example.com/x', { method: 'POST', headers, body: fixture('message_sent') });
    expect((await handler(context({ raw, bodyCache: {}, routePath: '' }))).status).toBe(200);
    await waitFor(() => otel.spans().some((span) => span.kind === SpanKind.SERVER));
    const server = otel.spans().find((span) => span.kind === SpanKind.SERVER);
    expect(server?.name).toBe('POST /configured');
    expect(server?.attributes['http.route']).toBe('/configured');
  });
});
