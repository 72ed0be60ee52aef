/**
 * Telemetry's series are bounded by configuration, never by requests: through every adapter, 1 000 requests
 * spelled as a sender may spell them (the path's case and a mount's parameter, the method's case and custom
 * methods, Content-Type, User-Agent, X-Forwarded-Proto, a traceparent with junk, unknown triggers, bad
 * credentials and bodies, handlers failing with the sender's text) add no metric series and no span name to
 * those of the first 200, and no attribute of any instrument or span holds any of the sender's text.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { fetchHandler } from '../../adapters/fetch/index.js';
import { honoHandler } from '../../adapters/hono/index.js';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import type { OpenTelemetryOptions } from '../../src/telemetry/otel/index.js';
import { basicAuthHeader, createTestEvent } from '../../src/testing/index.js';
import { httpApiEvent, lambdaContext } from '../adapters/lambda-events.js';
import { sdk, waitFor } from './sdk.js';

const AUTH = basicAuthHeader('platform', 's3cret-pass');
const INSTRUMENTS = [
  'http.server.request.duration',
  'chat_webhooks.deliveries',
  'chat_webhooks.handler.duration',
  'chat_webhooks.handler.failures',
];
/** Each request's own text carries this mark: none of it may reach an attribute or a span name. */
const MARK = /zq\d+q/i;

interface Delivery {
  method: string;
  /** The path and query, as sent. */
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}
/** The status answered, or 0 where the transport refused the request before any adapter saw it. */
type Send = (delivery: Delivery) => Promise<number>;
interface Mounted {
  send: Send;
  close: () => Promise<void>;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** `word` with the letters that `i`'s bits pick in upper case (the first, for an odd `i`): Express matches them alike. */
const spell = (word: string, i: number): string =>
  [...word].map((letter, at) => (((i * 37) >> at) & 1 ? letter.toUpperCase() : letter)).join('');

/** `@` is where the request's own text goes. */
const METHODS = ['POST', 'post', 'pOsT', 'PUT', 'GET', 'PROPFIND', 'X@'];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8; x=@', 'text/@', 'APPLICATION/JSON'];
const PROTOS = ['https', 'http', 'HTTPS, @', '@'];
/** Requests of one round: the second round repeats the first one's kinds of request, spelled anew. */
const KINDS = 200;

/**
 * The i-th request: its kind (`i % KINDS`: method, credentials, Content-Type, body, trigger, a failing handler,
 * the path's spelling or not) chosen by cycles of their own, its text (`zq<i>q` in every place a sender's text
 * may go, the path's case) by `i`.
 */
function delivery(i: number, path: (i: number, spelled: boolean) => string): Delivery {
  const kind = i % KINDS;
  const mark = `zq${i}q`;
  const fill = (text: string) => text.replace('@', mark);
  const method = fill(METHODS[kind % METHODS.length]!);
  const known = (kind % 11) % 2 === 0;
  const text = kind % 13 < 5 ? `fail ${mark}` : mark;
  const event = known ? createTestEvent('message_sent', { data: { message: { data: { text } } } }) : { trigger: `${mark}_trigger`, data: { text } };
  const bodies = [JSON.stringify(event), JSON.stringify(event), JSON.stringify(event), `{not json ${mark}`, `[${JSON.stringify(event)}]`];
  const headers: Record<string, string> = {
    'content-type': fill(CONTENT_TYPES[kind % CONTENT_TYPES.length]!),
    'user-agent': `agent/${mark}`,
    'x-forwarded-proto': fill(PROTOS[Math.floor(kind / 3) % PROTOS.length]!),
    // Half of them valid, half with junk after a version-00 value.
    traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${(i + 1).toString(16).padStart(16, '0')}-01${kind % 2 ? `-${mark}` : ''}`,
    authorization: kind % 3 === 2 ? basicAuthHeader('platform', mark) : AUTH,
  };
  const body = method === 'GET' ? undefined : bodies[kind % bodies.length];
  return { method, url: `${path(i, kind % 3 === 1)}?${mark}=${mark}`, headers, body };
}

/**
 * Requests over HTTP to `base`. Node's parser refuses some methods itself, closing the connection: 0. A request
 * that failed is sent once more, so that one sent on a connection closed that way still gets its answer.
 */
function overHttp(base: string, close: () => Promise<void>): Mounted {
  const once = ({ method, url, headers, body }: Delivery) =>
    fetch(`${base}${url}`, { method, headers, body }).then(async (response) => (await response.arrayBuffer(), response.status));
  return {
    send: (delivery) => once(delivery).catch(() => once(delivery).catch(() => 0)),
    close,
  };
}

/** A node server for `listener`, sent to over HTTP. */
async function listening(listener: RequestListener): Promise<Mounted> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return overHttp(`http://127.0.0.1:${port}`, () => new Promise<void>((resolve) => server.close(() => resolve())));
}

/** A real Request for a fetch-style handler (which refuses some methods in its constructor: 0). */
function overFetch(handle: (request: Request) => Response | Promise<Response>): Mounted {
  return {
    send: async ({ method, url, headers, body }) => {
      let request: Request;
      try {
        request = new Request(`https://hooks.example.com${url}`, { method, headers, body });
      } catch {
        return 0;
      }
      const response = await handle(request);
      await response.arrayBuffer();
      return response.status;
    },
    close: async () => undefined,
  };
}

interface Case {
  /** `http.route` as configured; undefined where nothing configures one. */
  route: string | undefined;
  otel?: Omit<OpenTelemetryOptions, 'tracerProvider' | 'meterProvider'>;
  /** The path of the i-th request, `spelled` as the framework may still match it (or not). */
  path: (i: number, spelled: boolean) => string;
  mount: (webhooks: Webhooks) => Promise<Mounted>;
}

const mountParameter = (i: number, spelled: boolean) => `/${spelled ? spell('hooks', i | 1) : 'hooks'}/zq${i}q`;
const fixedPath = (i: number, spelled: boolean) => (spelled ? `/${spell('webhooks', i | 1)}` : '/webhooks');

const cases: Record<string, Case> = {
  'express, mounted with a parameter': {
    route: '/hooks/:app',
    otel: { route: '/hooks/:app' },
    path: mountParameter,
    mount: async (webhooks) => {
      const app = express();
      app.use('/hooks/:app', expressMiddleware(webhooks));
      return listening(app);
    },
  },
  'express, mounted with no route configured': {
    route: undefined,
    path: fixedPath,
    mount: async (webhooks) => {
      const app = express();
      app.use('/webhooks', expressMiddleware(webhooks));
      return listening(app);
    },
  },
  'express, as a route in a router under a mount': {
    route: '/api/hooks/:app',
    otel: { route: '/api/hooks/:app' },
    path: (i, spelled) => `/${spelled ? spell('api', i | 1) : 'api'}${mountParameter(i, spelled)}`,
    mount: async (webhooks) => {
      const app = express();
      const router = express.Router();
      router.all('/hooks/:app', expressMiddleware(webhooks));
      app.use('/api', router);
      return listening(app);
    },
  },
  'express, as a route': {
    route: '/hooks/:app',
    path: mountParameter,
    mount: async (webhooks) => {
      const app = express();
      app.all('/hooks/:app', expressMiddleware(webhooks));
      return listening(app);
    },
  },
  'express, with path': {
    route: '/webhooks',
    path: fixedPath,
    mount: async (webhooks) => {
      const app = express();
      app.use(expressMiddleware(webhooks, { path: '/webhooks' }));
      return listening(app);
    },
  },
  fastify: {
    route: '/hooks/:app',
    path: mountParameter,
    mount: async (webhooks) => {
      const app = Fastify();
      await app.register(fastifyWebhooks, { webhooks, prefix: '/hooks', path: '/:app' });
      return overHttp(await app.listen({ port: 0, host: '127.0.0.1' }), () => app.close());
    },
  },
  node: {
    route: '/webhooks',
    path: fixedPath,
    mount: async (webhooks) => listening(nodeMiddleware(webhooks, { path: '/webhooks' })),
  },
  fetch: {
    route: '/webhooks',
    path: fixedPath,
    mount: async (webhooks) => overFetch(fetchHandler(webhooks, { path: '/webhooks', awaitHandlers: true })),
  },
  hono: {
    route: '/hooks/:app',
    path: mountParameter,
    mount: async (webhooks) => {
      const app = new Hono();
      app.all('/hooks/:app', honoHandler(webhooks, { awaitHandlers: true }));
      return overFetch((request) => app.request(request));
    },
  },
  lambda: {
    route: '/webhooks',
    path: fixedPath,
    mount: async (webhooks) => {
      const handler = lambdaHandler(webhooks, { path: '/webhooks' });
      return {
        send: async ({ method, url, headers, body }) => {
          const [path] = url.split('?');
          return (await handler(httpApiEvent({ method, headers, body, path }), lambdaContext())).statusCode;
        },
        close: async () => undefined,
      };
    },
  },
};

/** Each instrument's series (its attribute sets) and the spans' names, as the SDK collected them. */
async function seriesOf(otel: ReturnType<typeof sdk>): Promise<{ series: Record<string, string[]>; names: string[] }> {
  const series: Record<string, string[]> = {};
  for (const name of INSTRUMENTS) {
    series[name] = (await otel.points(name)).map(({ attributes }) => JSON.stringify(Object.entries(attributes).sort())).sort();
  }
  return { series, names: [...new Set(otel.spans().map((span) => span.name))].sort() };
}

describe.each(Object.entries(cases))('telemetry through %s', (_name, { route, otel: options, path, mount }) => {
  it('adds no series and no span name for 1 000 more spellings, and records none of their text', async () => {
    const otel = sdk(options);
    closers.push(() => otel.shutdown());
    const webhooks = createWebhooks({ auth: { username: 'platform', password: 's3cret-pass' }, telemetry: otel.telemetry, logLevel: 'silent' });
    const fail = (event: object) => {
      // The sender's text in the error: its code alone may reach telemetry.
      const text = JSON.stringify(event);
      if (text.includes('fail ')) throw new Error(text);
    };
    webhooks.on('message_sent', fail);
    webhooks.onUnknown(fail);
    const { send, close } = await mount(webhooks);
    closers.push(close);

    let accepted = 0;
    const round = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) if ((await send(delivery(i, path))) === 200) accepted++;
      // Every accepted event's handlers ran (no inbox: one `handle` span each) before the series are read.
      await waitFor(() => otel.spans().filter((span) => span.name.startsWith('handle ')).length === accepted);
      return seriesOf(otel);
    };
    const first = await round(0, KINDS);
    const after = await round(KINDS, 1000);

    expect(accepted).toBeGreaterThan(50);
    expect(after).toEqual(first);
    expect(after.names.length).toBeLessThanOrEqual(12);
    for (const name of INSTRUMENTS) expect(after.series[name]!.length).toBeLessThanOrEqual(40);
    expect(after.series['http.server.request.duration']!.length).toBeGreaterThan(0);

    const routes = new Set((await otel.points('http.server.request.duration')).map((point) => point.attributes['http.route']));
    expect([...routes]).toEqual([route]);
    // Every server span is named `{method} {route}` (`{method}` without one), of the conventions' methods.
    const verbs = ['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'HTTP'];
    const allowed = new Set(verbs.map((verb) => (route ? `${verb} ${route}` : verb)));
    const servers = otel.spans().filter((span) => !span.name.startsWith('handle '));
    for (const span of servers) expect(allowed).toContain(span.name);
    expect(servers.map((span) => span.name)).toContain(route ? `POST ${route}` : 'POST');

    expect(JSON.stringify(after)).not.toMatch(MARK);
    for (const span of otel.spans()) expect(JSON.stringify(span.attributes)).not.toMatch(MARK);
    await webhooks.close();
  }, 60_000);
});
