/** Writing the receiver's response to a node:http response (Express's res is node's). */
import type { ServerResponse } from 'node:http';
import type { WebhookResponse } from '../../src/receive/index.js';

/**
 * Writes the receiver's response with its length declared: after `writeHead`, node would send even a
 * two-byte "OK" chunked, which costs both ends more than the body itself.
 */
export function sendNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent || res.writableEnded) return;
  const { body } = response;
  res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}
