/**
 * What the `listen` tests share: the developer's own app behind `--forward` (a bare node:http server that keeps
 * what it received and answers 204), and a request with exactly the headers given, `Host` included, which
 * fetch would not let a test set.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface DeveloperApp {
  server: Server;
  /** Its `/hooks` URL, for `--forward`. */
  url: string;
  /** Every request it got, in order. */
  received: Received[];
  close(): Promise<void>;
}

export async function startDeveloperApp(): Promise<DeveloperApp> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { server, url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * A request with the headers given (`Host` is `127.0.0.1:<port>` unless they name one). `/events` never ends:
 * its answer is cut once the text holds `eventsUntil` (by default the end of its first message).
 */
export function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: string,
  eventsUntil = '\n\n',
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers }, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (path.startsWith('/events') && text.includes(eventsUntil)) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
