/**
 * Sockets, through real servers: a sender trickling a body it is not allowed to send is answered and
 * disconnected at once, and a stalled body is cut off at the body deadline, so slow senders cannot pile up
 * open connections (file descriptors).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, type WebhookError } from '../../src/index.js';
import { servers } from './servers.js';
import { AUTH, PASSWORD, USER, fixture } from './status-table.js';

/** Opens a socket, sends the head and part of a body, and records what comes back and when the server hangs up. */
async function trickle(port: number, head: string, firstChunk: string) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head + firstChunk);
  // Keeps trickling a byte every 20 ms until the server hangs up.
  const drip = setInterval(() => socket.writable && socket.write(' '), 20);
  return {
    received: () => received,
    ended,
    stop: () => {
      clearInterval(drip);
      socket.destroy();
    },
  };
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
      const client = await trickle(server.port, head('Basic d3Jvbmc6d3Jvbmc=', 100_000), '{"trigger":');
      cleanup.push(client.stop);
      const closed = await Promise.race([client.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 2000))]);
      expect(client.received()).toMatch(/^HTTP\/1\.1 401/);
      expect(client.received().toLowerCase()).toContain('connection: close');
      expect(closed).toBe(true);
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
