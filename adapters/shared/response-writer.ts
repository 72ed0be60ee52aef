/** Writing the receiver's response to a node:http response (Express's res is node's). */
import type { ServerResponse } from 'node:http';
import type { WebhookResponse } from '../../src/receive/index.js';
import { lingerIfClosing } from './lingering-close.js';

/** Writes the receiver's response. */
export function sendNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent || res.writableEnded) return;
  lingerIfClosing(res.req, response);
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}
