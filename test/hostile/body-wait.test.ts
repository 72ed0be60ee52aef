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
import { afterEach, describe, expect, it } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
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

describe('the body wait on pipelined requests', () => {
  it('reports a pipelined body cut off by its client even when an earlier request on the connection was read after it', async () => {
    const { webhooks, events, errors } = receiver(0);
    const port = await expressWithLookup(webhooks);
    const socket = await open(port);
    socket.on('error', () => undefined);
    // The first request is whole but its lookup takes longer; the second is cut off after its first bytes.
    socket.write(head(valid.length, { 'x-lookup-ms': '150' }) + valid + head(valid.length) + valid.slice(0, 20));
    await delay(400);
    socket.destroy();
    await delay(300);
    expect(events.map((event) => event.trigger)).toEqual(['message_sent']);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
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
