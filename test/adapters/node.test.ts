import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { AUTH, collectResponse, fixture, recordingReceiver, settle, statusTableSuite, type Send } from './status-table.js';

/** Sends a request to a real server over a socket. */
export function sender(server: Server, path = '/'): Send {
  return (request) =>
    new Promise((resolve, reject) => {
      const { port } = server.address() as AddressInfo;
      const req = httpRequest({ host: '127.0.0.1', port, path, method: request.method, headers: request.headers }, (res) =>
        collectResponse(res).then(resolve, reject),
      );
      req.on('error', reject);
      req.end(request.body);
    });
}

async function listen(server: Server): Promise<Server> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

statusTableSuite('node:http', async (webhooks) => {
  const server = await listen(createServer(nodeMiddleware(webhooks)));
  return { send: sender(server), close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
});

describe('node:http path handling', () => {
  it('answers 404 to another path when there is no next(), and dispatches nothing', async () => {
    const { webhooks, events } = recordingReceiver();
    const server = await listen(createServer(nodeMiddleware(webhooks, { path: '/hooks/chat' })));
    try {
      const headers = { 'content-type': 'application/json', authorization: AUTH };
      const elsewhere = await sender(server, '/other')({ method: 'POST', headers, body: fixture('message_sent') });
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(elsewhere.body).toBe('Not found.');
      const here = await sender(server, '/hooks/chat?x=1')({ method: 'POST', headers, body: fixture('message_sent') });
      expect(here.status).toBe(200);
      await settle();
      expect(events).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it('passes another path to next() in a connect-style stack', async () => {
    const { webhooks } = recordingReceiver();
    const middleware = nodeMiddleware(webhooks, { path: '/hooks/chat' });
    const server = await listen(
      createServer((req, res) =>
        middleware(req, res, () => {
          res.writeHead(299);
          res.end('next');
        }),
      ),
    );
    try {
      const response = await sender(server, '/other')({ method: 'POST', headers: {}, body: '{}' });
      expect(response.status).toBe(299);
    } finally {
      server.close();
    }
  });
});
