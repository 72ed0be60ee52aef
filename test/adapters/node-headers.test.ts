/**
 * What the node:http-based adapters read from a request besides its body: every copy of a repeated
 * Authorization header (node's `req.headers` keeps only the first), and the path without its query string.
 * Sent over real sockets, since only the raw request shows a header sent twice.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { pathOf } from '../../adapters/shared/node-request.js';
import { servers } from './servers.js';
import { AUTH, collectResponse, fixture, recordingReceiver, settle, type ReceivedResponse } from './status-table.js';

/** A POST whose headers are written as given: an array value is sent as that many header lines. */
function post(port: number, headers: Record<string, string | string[]>, body: string): Promise<ReceivedResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/webhooks', method: 'POST', headers }, (res) =>
      collectResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The status code of a request written byte for byte, header names spelled as given. */
function rawStatus(port: number, head: string[], body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(received.slice(9, 12))));
    const lines = ['POST /webhooks HTTP/1.1', 'Host: 127.0.0.1', ...head, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
    socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

for (const [name, start] of Object.entries(servers)) {
  describe(`${name}: a repeated Authorization header`, () => {
    it('is refused 401 even when both copies are the right credentials, whatever their spelling', async () => {
      const { webhooks, events, errors } = recordingReceiver();
      const { port, close } = await start(webhooks);
      try {
        const body = fixture('message_sent');
        const twice = await post(port, { 'content-type': 'application/json', authorization: [AUTH, AUTH] }, body);
        expect(twice.status).toBe(401);
        const spelled = await rawStatus(port, ['Content-Type: application/json', `Authorization: ${AUTH}`, `AUTHORIZATION: ${AUTH}`], body);
        expect(spelled).toBe(401);
        // The same request with one of the two copies is taken: the 401 is the repeat's.
        expect(await rawStatus(port, ['Content-Type: application/json', `AUTHORIZATION: ${AUTH}`], body)).toBe(200);
        // One copy, among other repeated headers (Cache-Control is as long as Authorization): accepted.
        const once = await post(port, { 'content-type': 'application/json', authorization: AUTH, 'cache-control': ['no-cache', 'no-store'] }, body);
        expect(once.status).toBe(200);
        await settle();
        expect(events).toHaveLength(1);
        expect(errors.map((error) => error.code)).toEqual(['unauthorized', 'unauthorized']);
      } finally {
        await close();
      }
    });
  });
}

for (const [name, start] of Object.entries(servers)) {
  describe(`${name}: other repeated headers`, () => {
    it('are read as node reads them (first Content-Type kept) while Authorization comes once', async () => {
      // Only a repeated Authorization switches to every copy (headersDistinct); node itself keeps the first of a
      // repeated Content-Type. Cache-Control is as long as "authorization": the length is only a shortcut.
      const { webhooks, events } = recordingReceiver();
      const { port, close } = await start(webhooks);
      try {
        const head = ['Content-Type: application/json', 'Content-Type: text/plain', 'Cache-Control: no-cache', `Authorization: ${AUTH}`];
        expect(await rawStatus(port, head, fixture('message_sent'))).toBe(200);
        await settle();
        expect(events).toHaveLength(1);
      } finally {
        await close();
      }
    });
  });
}

describe('pathOf', () => {
  it('is the URL up to its query string, and / for a request without one', () => {
    expect(pathOf('/webhooks?token=1&x=2')).toBe('/webhooks');
    expect(pathOf('/webhooks?')).toBe('/webhooks');
    expect(pathOf('/webhooks')).toBe('/webhooks');
    expect(pathOf('/a/b')).toBe('/a/b');
    expect(pathOf('')).toBe('/');
    expect(pathOf(undefined)).toBe('/');
  });
});
