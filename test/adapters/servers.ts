/** Real servers for suites that talk to the node:http-based adapters over sockets: node, Express, Fastify. */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import type { Webhooks } from '../../src/index.js';
import { collectResponse, type ReceivedResponse } from './status-table.js';

export type Start = (webhooks: Webhooks) => Promise<{ port: number; close: () => Promise<void> }>;

/** Listens on a free port; closing also drops kept-alive and half-sent connections. */
async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Each adapter at POST /webhooks, as the README and docs/frameworks.md mount it. */
export const servers: Record<'node' | 'express' | 'fastify', Start> = {
  node: (webhooks) => listen(createServer(nodeMiddleware(webhooks))),
  express: (webhooks) => {
    const app = express();
    app.use('/webhooks', expressMiddleware(webhooks));
    return listen(createServer(app));
  },
  fastify: async (webhooks) => {
    const app = Fastify();
    await app.register(fastifyWebhooks, { webhooks });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  },
};

/**
 * Serves `app` on a free port and POSTs `body` to `path` over a real socket in two writes, without
 * Content-Length (as a streaming sender would), so only the bytes a parser kept can be measured.
 */
export async function sendChunked(
  app: { listen(port: number, host: string, ready: () => void): Server },
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<ReceivedResponse> {
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  try {
    return await new Promise<ReceivedResponse>((resolve, reject) => {
      const { port } = server.address() as AddressInfo;
      const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) =>
        collectResponse(res).then(resolve, reject),
      );
      // The server may answer (and close) before the whole body is written.
      req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half));
      setTimeout(() => req.end(body.slice(half)), 5);
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
