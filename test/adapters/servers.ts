/** Real servers for suites that talk to the node:http-based adapters over sockets: node, Express, Fastify. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import type { Webhooks } from '../../src/index.js';

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

/** Each adapter at POST /webhooks, as its README section mounts it. */
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
