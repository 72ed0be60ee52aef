/**
 * Sockets, through real servers: a sender trickling a body it is not allowed to send is answered at once and
 * disconnected within LINGER_MS, and a stalled body is cut off at the body deadline, so slow senders cannot
 * pile up open connections (file descriptors). A sender that sends a refused body whole reads the refusal
 * instead of a reset.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, type WebhookError } from '../../src/index.js';
import { LINGER_MS } from '../../adapters/shared/lingering-close.js';
import { servers } from './servers.js';
import { AUTH, PASSWORD, USER, fixture } from './status-table.js';

/** Opens a socket, sends the head and part of a body, and records what comes back and when the server hangs up. */
async function trickle(port: number, head: string, firstChunk: string, { halfOpen = false } = {}) {
  // Half-open, the client keeps sending after the server's FIN, as a sender that ignores it would.
  const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: halfOpen });
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  let answeredAt: number | undefined;
  socket.on('data', (chunk) => {
    answeredAt ??= Date.now();
    received += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  // Resolves with the time the connection closed.
  const ended = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  socket.write(head + firstChunk);
  // Keeps trickling a byte every 20 ms until the server hangs up.
  const drip = setInterval(() => socket.writable && socket.write(' '), 20);
  return {
    received: () => received,
    answeredAt: () => answeredAt,
    ended,
    stop: () => {
      clearInterval(drip);
      socket.destroy();
    },
  };
}

/** Sends the head and the whole body as fast as the socket takes it; records the answer and any socket error. */
async function sendWhole(port: number, head: string, body: Buffer) {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  // Bytes of the body still in the sender's hands when the answer came: the kernel's buffers were full.
  let unsentAtAnswer: number | undefined;
  socket.on('data', (chunk) => {
    unsentAtAnswer ??= socket.writableLength;
    received += chunk.toString('latin1');
  });
  socket.on('error', (cause) => (error = cause));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  // Not ended: like fetch, the sender waits for the answer with its side open.
  socket.write(body);
  await closed;
  return { received, error, unsentAtAnswer };
}

const head = (authorization: string, length: number) =>
  `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${authorization}\r\nContent-Length: ${length}\r\n\r\n`;

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

for (const [name, start] of Object.entries(servers)) {
  describe(`${name}: slow senders do not keep connections`, () => {
    it('an unauthenticated trickling body gets 401 and the server closes the socket without waiting for the body', async () => {
      const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {} });
      const server = await start(webhooks);
      cleanup.push(server.close);
      const client = await trickle(server.port, head('Basic d3Jvbmc6d3Jvbmc=', 100_000), '{"trigger":', { halfOpen: true });
      cleanup.push(client.stop);
      // Not even the LINGER_MS a 413 gets: nothing more of an unauthenticated sender's is read.
      const closed = await Promise.race([client.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), LINGER_MS * 0.8))]);
      expect(client.received()).toMatch(/^HTTP\/1\.1 401/);
      expect(client.received().toLowerCase()).toContain('connection: close');
      expect(closed).toBe(true);
    });

    it('a body over maxBodyBytes sent whole reads its 413: the rest is dropped before the socket closes, not reset', async () => {
      const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {}, maxBodyBytes: 1024 });
      const server = await start(webhooks);
      cleanup.push(server.close);
      // Larger than the kernel's socket buffers on both sides (4 MiB to send here, and the receiver's, which
      // does not grow while the server is not reading), so the sender is still writing when answered; small
      // enough for the server to drop the rest within LINGER_MS on a busy machine (32 MiB was not, at a load of 10).
      const body = Buffer.alloc(8 * 1024 * 1024, 0x20);
      for (const declared of [true, false]) {
        const start = declared
          ? head(AUTH, body.length)
          : head(AUTH, 0).replace('Content-Length: 0', 'Transfer-Encoding: chunked');
        const sent = declared ? body : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
        const answer = await sendWhole(server.port, start, sent);
        expect(answer.error?.code).toBeUndefined();
        expect(answer.unsentAtAnswer, 'the sender was still writing when answered').toBeGreaterThan(0);
        expect(answer.received).toMatch(/^HTTP\/1\.1 413/);
        expect(answer.received.toLowerCase()).toContain('connection: close');
      }
    });

    it(`a trickling refused body is cut off after LINGER_MS (${LINGER_MS} ms), its answer sent at once`, async () => {
      const webhooks = createWebhooks({ auth: false, logger: {}, maxBodyBytes: 1024 });
      const server = await start(webhooks);
      cleanup.push(server.close);
      const client = await trickle(server.port, head(AUTH, 100_000), '{"trigger":', { halfOpen: true });
      cleanup.push(client.stop);
      const closedAt = await client.ended;
      expect(client.received()).toMatch(/^HTTP\/1\.1 413/);
      // Answered first, closed a linger later (not when the answer went out, and not never).
      expect(closedAt - (client.answeredAt() ?? closedAt)).toBeGreaterThanOrEqual(LINGER_MS * 0.8);
    });

    it('an authenticated body that stalls is answered 408 at bodyTimeoutMs and the socket closed', async () => {
      const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {}, bodyTimeoutMs: 150 });
      const errors: WebhookError[] = [];
      webhooks.onError((error) => void errors.push(error));
      const server = await start(webhooks);
      cleanup.push(server.close);
      const body = fixture('message_sent');
      const client = await trickle(server.port, head(AUTH, body.length + 100_000), body.slice(0, 20));
      cleanup.push(client.stop);
      const started = Date.now();
      const closed = await Promise.race([client.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 3000))]);
      expect(closed).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
      expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
      expect(errors.map((error) => error.code)).toEqual(['body_timeout']);
    });
  });
}
