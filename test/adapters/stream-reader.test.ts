/**
 * nodeBodyReader on real node:http requests: where it stops (a body whose first chunks add up to exactly the
 * limit and then go on is still too long), what it leaves attached once over the limit, and requests that
 * are already gone.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { nodeBodyReader } from '../../adapters/shared/stream-reader.js';
import { BodyArrival, type WebhookBody } from '../../src/index.js';
import { AUTH, LIMIT, collectResponse, messageOfSize, recordingReceiver, settle, type ReceivedResponse } from './status-table.js';

/** What a reader handed over, as a promise: a body in memory, a promise, or a body arriving by callbacks. */
function settled(read: ReturnType<ReturnType<typeof nodeBodyReader>>): Promise<WebhookBody> {
  if (read instanceof BodyArrival) return new Promise<WebhookBody>((resolve, reject) => read.onArrival(resolve, reject));
  return Promise.resolve(read);
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The bytes (or text) a reader resolved with, as text. */
const text = (body: WebhookBody) => (typeof body === 'string' ? body : Buffer.from(body as Uint8Array).toString());

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chunked POST whose body goes out as the given pieces, a pause between them, so each arrives as its own chunk. */
function postInPieces(port: number, pieces: Buffer[], headers: Record<string, string> = {}): Promise<ReceivedResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', headers }, (res) =>
      collectResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
    void (async () => {
      for (const piece of pieces) {
        req.write(piece);
        await delay(30);
      }
      req.end();
    })();
  });
}

describe('nodeBodyReader', () => {
  it('answers 413 to a body whose first chunks are exactly the limit and whose last byte comes later', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const port = await listen(nodeMiddleware(webhooks));
    // A valid delivery of exactly LIMIT bytes, then one byte of JSON whitespace: valid JSON, one byte too long.
    const exact = Buffer.from(messageOfSize(LIMIT));
    const response = await postInPieces(port, [exact.subarray(0, 1000), exact.subarray(1000), Buffer.from(' ')], {
      'content-type': 'application/json',
      authorization: AUTH,
    });
    expect(response.status).toBe(413);
    await settle();
    expect(events).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('once over the limit, stops listening for data and pauses the request', async () => {
    let seen: { body: WebhookBody; dataListeners: number; paused: boolean } | undefined;
    const port = await listen((req, res) => {
      const before = req.listenerCount('data');
      void settled(nodeBodyReader(req)(10)).then((body) => {
        seen = { body, dataListeners: req.listenerCount('data') - before, paused: req.isPaused() };
        res.end('ok');
      });
    });
    await postInPieces(port, [Buffer.from('0123456789abcdef'), Buffer.from('more that must not be read')]);
    expect(seen).toBeDefined();
    expect(text(seen?.body ?? '')).toBe('0123456789abcdef');
    expect(seen?.dataListeners).toBe(0);
    expect(seen?.paused).toBe(true);
  });

  it('joins a body that arrived in several chunks, and returns a single chunk as it is', async () => {
    const bodies: string[] = [];
    const port = await listen((req, res) => {
      void settled(nodeBodyReader(req)(LIMIT)).then((body) => {
        bodies.push(text(body));
        res.end('ok');
      });
    });
    await postInPieces(port, [Buffer.from('{"a":'), Buffer.from('1'), Buffer.from('}')]);
    await postInPieces(port, [Buffer.from('{"b":2}')]);
    expect(bodies).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('resolves empty for a request that is already destroyed instead of waiting forever', async () => {
    let read: Promise<WebhookBody> | undefined;
    const port = await listen((req, res) => {
      req.destroy();
      read = settled(nodeBodyReader(req)(LIMIT));
      res.destroy();
    });
    await postInPieces(port, [Buffer.from('{}')]).catch(() => undefined);
    expect(read).toBeDefined();
    expect(await read).toEqual(new Uint8Array(0));
  });

  it('rejects when the client goes away before the body is complete', async () => {
    let read: Promise<WebhookBody> | undefined;
    const arrived = new Promise<void>((resolve) => {
      void listen((req) => {
        read = settled(nodeBodyReader(req)(LIMIT));
        resolve();
      });
    });
    await delay(10);
    const { port } = server?.address() as AddressInfo;
    const client = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', headers: { 'content-length': '100' } });
    client.on('error', () => undefined);
    client.write('{"partial":');
    await arrived;
    client.destroy();
    await expect(read).rejects.toThrow();
  });

  it('tells the connection\'s error when the client goes away, and adds one listener per connection, not per request', async () => {
    const reads: Array<Promise<WebhookBody>> = [];
    const closeListeners: number[] = [];
    const bodyArrived = new Promise<void>((resolve) => {
      void listen((req, res) => {
        closeListeners.push(req.socket.listenerCount('close'));
        reads.push(settled(nodeBodyReader(req)(LIMIT)));
        if (req.headers['content-length'] === '100') resolve();
        else req.on('end', () => res.end('ok'));
      });
    });
    await delay(10);
    const { port } = server?.address() as AddressInfo;
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: string) =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(body);
      });
    for (let i = 0; i < 3; i++) await post(`{"n":${i}}`);
    const client = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST', agent, headers: { 'content-length': '100' } });
    client.on('error', () => undefined);
    client.write('{"partial":');
    await bodyArrived;
    client.destroy();
    await expect(reads[3]).rejects.toMatchObject({ code: 'ECONNRESET' });
    for (const read of reads.slice(0, 3)) expect(text(await read)).toMatch(/^\{"n":\d\}$/);
    // The same connection for the first three: its close listeners grew once, at the first request's body.
    expect(closeListeners[1]).toBe((closeListeners[0] as number) + 1);
    expect(closeListeners[2]).toBe(closeListeners[1]);
    agent.destroy();
  });

  // Fastify hands the reader whatever stream a preParsing hook put in place of the request (a decompressor,
  // say): such a stream can fail, or be destroyed without an error, halfway through.
  const readerOf = (stream: PassThrough) => settled(nodeBodyReader(stream as unknown as IncomingMessage)(LIMIT));

  it('rejects with the error of a stream that fails halfway', async () => {
    const stream = new PassThrough();
    const read = readerOf(stream);
    stream.write('{"partial":');
    stream.destroy(new Error('incorrect header check'));
    await expect(read).rejects.toThrow('incorrect header check');
  });

  it('rejects when a stream is destroyed halfway without an error', async () => {
    const stream = new PassThrough();
    const read = readerOf(stream);
    stream.write('{"partial":');
    stream.destroy();
    await expect(read).rejects.toThrow(/closed before the body was complete/);
  });

  it('resolves with the whole body of a stream that ends, though close follows', async () => {
    const stream = new PassThrough();
    const read = readerOf(stream);
    stream.end('{"whole":true}');
    expect(text(await read)).toBe('{"whole":true}');
  });
});
