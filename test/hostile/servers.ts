/** Real servers on loopback for the hostile-input suite: the node:http adapter and Express. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { expressMiddleware } from '../../adapters/express/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { createWebhooks, type ParsedWebhook, type WebhookError } from '../../src/index.js';

export const USER = 'platform';
export const PASSWORD = 'correct horse';
/** The default limit, 1 MiB. */
export const LIMIT = 1024 * 1024;

export interface HostileServer {
  name: string;
  port: number;
  /** Events that reached a typed handler (on(trigger)). */
  typed: ParsedWebhook[];
  /** Events that reached onUnknown. */
  unknown: ParsedWebhook[];
  errors: WebhookError[];
  close(): Promise<void>;
}

export type ServerKind = 'node' | 'express' | 'express+json';

export async function startServer(kind: ServerKind): Promise<HostileServer> {
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, maxBodyBytes: LIMIT, logger: {} });
  const typed: ParsedWebhook[] = [];
  const unknown: ParsedWebhook[] = [];
  const errors: WebhookError[] = [];
  for (const trigger of ['message_sent', 'group_member_added', 'call_started'] as const) {
    webhooks.on(trigger, (event) => void typed.push(event));
  }
  webhooks.onUnknown((event) => void unknown.push(event));
  webhooks.onError((error) => void errors.push(error));

  let server: Server;
  if (kind === 'node') {
    server = createServer(nodeMiddleware(webhooks));
  } else {
    const app = express();
    if (kind === 'express+json') app.use(express.json({ limit: LIMIT }));
    app.use(expressMiddleware(webhooks));
    server = createServer(app);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    name: kind,
    port: (server.address() as AddressInfo).port,
    typed,
    unknown,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
