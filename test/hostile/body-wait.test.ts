/**
 * The body wait over real sockets (node:http, Express): keep-alive connections carrying many requests,
 * pipelined requests, bodies cut off or aborted mid-way. Every request is answered or reported once, none
 * waits for a deadline it need not, and a connection holds one 'close' listener however many requests it
 * carried.
 */
import { readFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { createWebhooks, type ParsedWebhook, type WebhookError } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';

const USER = 'platform';
const PASSWORD = 'correct horse';
const AUTH = basicAuthHeader(USER, PASSWORD);
const valid = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

function receiver(bodyTimeoutMs: number) {
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, bodyTimeoutMs, logger: {} });
  const events: ParsedWebhook[] = [];
  const errors: WebhookError[] = [];
  webhooks.on('message_sent', (event) => void events.push(event));
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, events, errors };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A request head for a delivery of `length` bytes; `extra` are more header lines. */
const head = (length: number, extra: Record<string, string> = {}) =>
  `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: ${AUTH}\r\n` +
  `Content-Length: ${length}\r\n${Object.entries(extra)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Express behind an async middleware whose wait each request names (a lookup that takes its own time). */
async function expressWithLookup(webhooks: ReturnType<typeof receiver>['webhooks']): Promise<number> {
  const app = express();
  app.use(async (req, _res, next) => {
    await delay(Number(req.headers['x-lookup-ms'] ?? 0));
    next();
  });
  app.use(expressMiddleware(webhooks));
  return listen(app);
}

/**
 * Two pipelined requests: the first whole but slow to look up (x-lookup-ms), the second cut off after its first
 * bytes, then the connection dropped. The first is an event; the second, one invalid_json.
 */
async function slowThenCutOff(port: number, events: Array<{ trigger: string }>, errors: Array<{ code: string }>): Promise<void> {
  const socket = await open(port);
  socket.on('error', () => undefined);
  socket.write(head(valid.length, { 'x-lookup-ms': '150' }) + valid + head(valid.length) + valid.slice(0, 20));
  await delay(400);
  socket.destroy();
  await delay(300);
  expect(events.map((event) => event.trigger)).toEqual(['message_sent']);
  expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
}

describe('the body wait on pipelined requests', () => {
  it('reports a pipelined body cut off by its client even when an earlier request on the connection was read after it', async () => {
    const { webhooks, events, errors } = receiver(0);
    const port = await expressWithLookup(webhooks);
    await slowThenCutOff(port, events, errors);
  });
});

describe('the body wait on a request without a real connection', () => {
  it('reads a request whose socket is a stand-in object, as serverless-http builds it on AWS Lambda', async () => {
    const { webhooks, events, errors } = receiver(10_000);
    // serverless-http's ServerlessRequest: an IncomingMessage over a plain object, its body pushed on read.
    const standIn = { encrypted: true, readable: false, remoteAddress: '127.0.0.1', address: () => ({ port: 443 }), end() {}, destroy() {} };
    const req = new IncomingMessage(standIn as unknown as Socket);
    Object.assign(req, {
      method: 'POST',
      url: '/',
      complete: true,
      httpVersion: '1.1',
      httpVersionMajor: 1,
      httpVersionMinor: 1,
      headers: { 'content-type': 'application/json', authorization: AUTH, 'content-length': String(Buffer.byteLength(valid)) },
    });
    req._read = () => {
      req.push(Buffer.from(valid));
      req.push(null);
    };
    const res = new ServerResponse(req);
    expect(() => nodeMiddleware(webhooks)(req, res)).not.toThrow();
    await delay(50);
    expect(errors.map((error) => error.code)).toEqual([]);
    expect(res.statusCode).toBe(200);
    expect(events.map((event) => event.trigger)).toEqual(['message_sent']);
  });
});

/** Statuses of the responses read from `socket` until it closes or `count` arrived. */
function statuses(socket: Socket, count: number, timeoutMs = 3000): Promise<number[]> {
  return new Promise((resolve) => {
    let received = '';
    const found: number[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', done);
      resolve(found);
    };
    const timer = setTimeout(done, timeoutMs);
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) break;
        const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1];
        // The receiver's answers are chunked unless they say their length; their text never holds a chunk end.
        const last = length === undefined ? received.indexOf('\r\n0\r\n\r\n', end) : end + 4 + Number(length);
        if (last === -1 || received.length < last) break;
        found.push(Number(received.slice(9, 12)));
        received = received.slice(length === undefined ? last + 7 : last);
      }
      if (found.length >= count) done();
    };
    socket.on('data', onData);
    socket.on('close', done);
  });
}

/** A message_sent delivery whose message id is `id`. */
const delivery = (id: string) => {
  const event = JSON.parse(valid);
  event.data.message.id = id;
  return JSON.stringify(event);
};
const messageIds = (events: ParsedWebhook[]) => events.map((event) => (event.data as { message: { id: string } }).message.id);

describe('the body wait on keep-alive connections', () => {
  it('carries 100 requests on one connection with one close listener, then reports the one cut off', async () => {
    const { webhooks, events, errors } = receiver(0);
    const handler = nodeMiddleware(webhooks);
    const closeListeners = new Set<number>();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    const port = await listen((req, res) => {
      handler(req, res);
      closeListeners.add(req.socket.listenerCount('close'));
    });
    const socket = await open(port);
    socket.on('error', () => undefined);
    const answered: number[] = [];
    for (let i = 0; i < 100; i++) {
      const body = delivery(`m${i}`);
      const response = statuses(socket, 1);
      socket.write(head(Buffer.byteLength(body)) + body);
      answered.push(...(await response));
    }
    socket.write(head(500) + '{"trigger":"message_sent",');
    await delay(50);
    socket.destroy();
    await delay(100);
    process.off('warning', onWarning);
    expect(answered).toEqual(Array.from({ length: 100 }, () => 200));
    expect(messageIds(events)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
    expect(closeListeners.size).toBe(1);
    expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
  });

  it('answers pipelined requests in order, each its own, an invalid one among them', async () => {
    const { webhooks, events, errors } = receiver(0);
    const port = await listen(nodeMiddleware(webhooks));
    const socket = await open(port);
    const bodies = [delivery('first'), '{"trigger":', delivery('third')];
    const answers = statuses(socket, 3);
    socket.write(bodies.map((body) => head(Buffer.byteLength(body)) + body).join(''));
    const seen = await answers;
    socket.destroy();
    expect(seen[0]).toBe(200);
    expect(seen[1]).toBe(400);
    // After the 400 the connection may close; if it carried on, the third is answered as itself.
    if (seen.length === 3) expect(seen[2]).toBe(200);
    expect(messageIds(events)).toEqual(seen.length === 3 ? ['first', 'third'] : ['first']);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });

  it('answers a request after a refused one on the same connection', async () => {
    const { webhooks, events } = receiver(0);
    const port = await listen(nodeMiddleware(webhooks));
    const socket = await open(port);
    const bad = '{"trigger":"message_sent",';
    let answer = statuses(socket, 1);
    socket.write(head(bad.length) + bad);
    const first = await answer;
    answer = statuses(socket, 1);
    const good = delivery('after-error');
    socket.write(head(Buffer.byteLength(good)) + good);
    const second = await answer;
    socket.destroy();
    expect(first).toEqual([400]);
    expect(second).toEqual([200]);
    expect(messageIds(events)).toEqual(['after-error']);
  });

  it('answers 408 to a slow body once, and drops what comes after', async () => {
    const { webhooks, events, errors } = receiver(200);
    const port = await listen(nodeMiddleware(webhooks));
    const socket = await open(port);
    socket.on('error', () => undefined);
    const body = delivery('slow');
    const answer = statuses(socket, 2, 1500);
    socket.write(head(Buffer.byteLength(body)) + body.slice(0, 30));
    await delay(600);
    if (!socket.destroyed) socket.write(body.slice(30));
    const seen = await answer;
    socket.destroy();
    await delay(50);
    expect(seen).toEqual([408]);
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['body_timeout']);
  });

  it('reports a chunked body that breaks mid-way on a connection that carried a request before', async () => {
    const { webhooks, events, errors } = receiver(0);
    const port = await listen(nodeMiddleware(webhooks));
    const socket = await open(port);
    socket.on('error', () => undefined);
    const body = delivery('before');
    const first = statuses(socket, 1);
    socket.write(head(Buffer.byteLength(body)) + body);
    expect(await first).toEqual([200]);
    const chunked = head(0).replace('Content-Length: 0\r\n', 'Transfer-Encoding: chunked\r\n');
    const second = statuses(socket, 1);
    socket.write(`${chunked}a\r\n{"trigger":\r\nzz-not-a-size\r\n`);
    const answer = await second;
    await delay(100);
    socket.destroy();
    // node:http answers the broken framing itself (400) and closes the connection.
    expect(answer.every((status) => status === 400)).toBe(true);
    expect(messageIds(events)).toEqual(['before']);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });

  it('reports a body aborted mid-way at once, with no body deadline', async () => {
    const { webhooks, errors } = receiver(0);
    const port = await listen(nodeMiddleware(webhooks));
    const socket = await open(port);
    socket.on('error', () => undefined);
    socket.write(head(1000) + '{"trigger":"message_sent","data":{"message":');
    await delay(50);
    socket.resetAndDestroy();
    await delay(100);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });
});

describe('the body wait through Fastify on a real socket', () => {
  it('reports a pipelined body cut off after an earlier request whose hook took longer', async () => {
    const { webhooks, events, errors } = receiver(0);
    const app = Fastify();
    app.addHook('onRequest', async (request) => {
      await delay(Number(request.headers['x-lookup-ms'] ?? 0));
    });
    await app.register(fastifyWebhooks, { webhooks, path: '/' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await slowThenCutOff((app.server.address() as AddressInfo).port, events, errors);
    } finally {
      await app.close();
    }
  });
});
