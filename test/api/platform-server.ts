/**
 * A stand-in for the platform's REST side on a real node:http server (port 0): `GET /v3/users` and
 * `POST /apps` as the spec describes them, checking every header. Tests can queue answers (errors, delays,
 * bodies that are not JSON, dropped connections) ahead of the real behaviour, and read every request back.
 *
 * The region comes from the host the client built: a test routes `https://<appId>.api-<region>.<domain>` here
 * with `forwardingFetch`, which records the URL and passes the host on in `x-original-host`.
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PlannedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  /** Wait before answering (ms). */
  delayMs?: number;
  /** Send the status and headers at once, then wait this long before the body. */
  bodyDelayMs?: number;
  /** Drop the connection without an answer. */
  destroy?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The host the client addressed (x-original-host when forwarded, else Host). */
  host: string;
}

export interface PlatformOptions {
  appId: string;
  apiKey: string;
  key: string;
  secret: string;
  /** Users per region. */
  users: Record<string, Array<Record<string, unknown>>>;
  /** Leave out `meta.pagination` (the client must then stop at an empty page). */
  withoutPagination?: boolean;
}

export interface Platform {
  url: string;
  requests: RecordedRequest[];
  /** Queue answers for the next requests, in order, before the real behaviour resumes. */
  plan(...answers: PlannedAnswer[]): void;
  close(): Promise<void>;
}

const REGION_HOST = /^([a-z0-9-]+)\.api-(us|eu|in)\.([a-z0-9.-]+)$/;

export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const requests: RecordedRequest[] = [];
  const planned: PlannedAnswer[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const host = String(req.headers['x-original-host'] ?? req.headers.host ?? '');
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body, host });
      const answer = planned.shift();
      if (answer) return void playPlanned(answer, req, res);
      route(options, req, url, host, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    plan: (...answers) => planned.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function playPlanned(answer: PlannedAnswer, req: IncomingMessage, res: ServerResponse): void {
  setTimeout(() => {
    if (answer.destroy) return void req.socket.destroy();
    const isText = typeof answer.body === 'string';
    const text = answer.body === undefined ? '' : isText ? (answer.body as string) : JSON.stringify(answer.body);
    res.writeHead(answer.status ?? 200, { 'content-type': isText ? 'text/html' : 'application/json', ...answer.headers });
    if (!answer.bodyDelayMs) return void res.end(text);
    res.flushHeaders();
    setTimeout(() => res.end(text), answer.bodyDelayMs);
  }, answer.delayMs ?? 0);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': `req-${status}-${Date.now()}` });
  res.end(JSON.stringify(body));
}

/** The header checks the spec implies for every request: JSON both ways. */
function jsonHeadersProblem(headers: IncomingHttpHeaders): string | undefined {
  if (headers['content-type'] !== 'application/json') return `content-type must be application/json, got ${headers['content-type']}`;
  if (!String(headers.accept ?? '').includes('application/json')) return `accept must include application/json, got ${headers.accept}`;
  return undefined;
}

function route(options: PlatformOptions, req: IncomingMessage, url: URL, host: string, body: string, res: ServerResponse): void {
  if (req.method === 'GET' && url.pathname === '/v3/users') return listUsers(options, req.headers, url, host, res);
  if (req.method === 'POST' && url.pathname === '/apps') return createApp(options, req.headers, body, res);
  send(res, 404, { error: { code: 'NOT_FOUND', message: `no route ${req.method} ${url.pathname}` } });
}

function listUsers(options: PlatformOptions, headers: IncomingHttpHeaders, url: URL, host: string, res: ServerResponse): void {
  if (headers.apikey !== options.apiKey) {
    // Like many services, the error echoes what it was given: the client must redact it.
    return send(res, 401, { error: { code: 'AUTH_ERR_APIKEY_NOT_FOUND', message: `The apiKey ${String(headers.apikey)} is not valid.` } });
  }
  const problem = jsonHeadersProblem(headers);
  if (problem) return send(res, 415, { error: { code: 'ERR_HEADERS', message: problem } });
  const match = REGION_HOST.exec(host);
  const region = match ? match[2]! : 'us';
  if (match && match[1] !== options.appId.toLowerCase()) return send(res, 404, { error: { code: 'ERR_APP_NOT_FOUND', message: 'no such app' } });
  const all = options.users[region] ?? [];
  const perPage = Number(url.searchParams.get('perPage') ?? 100);
  const page = Number(url.searchParams.get('page') ?? 1);
  const data = all.slice((page - 1) * perPage, page * perPage);
  const totalPages = Math.max(1, Math.ceil(all.length / perPage));
  const pagination = { total: all.length, count: data.length, per_page: perPage, current_page: page, total_pages: totalPages };
  send(res, 200, {
    data,
    meta: options.withoutPagination ? { region } : { pagination, cursor: { updatedAt: 1700000000, affix: 'append' }, region },
  });
}

const REGIONS = ['us', 'eu', 'in'];

function createApp(options: PlatformOptions, headers: IncomingHttpHeaders, text: string, res: ServerResponse): void {
  if (headers.key !== options.key || headers.secret !== options.secret) {
    return send(res, 401, { error: { code: 'ERR_UNAUTHORIZED', message: `key ${String(headers.key)} / secret ${String(headers.secret)} rejected` } });
  }
  const problem = jsonHeadersProblem(headers);
  if (problem) return send(res, 415, { error: { code: 'ERR_HEADERS', message: problem } });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return send(res, 400, { error: { code: 'ERR_BAD_JSON', message: 'body is not JSON' } });
  }
  const valid = typeof body.name === 'string' && typeof body.version === 'string' && REGIONS.includes(String(body.region));
  if (!valid) return send(res, 400, { error: { code: 'ERR_BAD_REQUEST', message: 'name, version and region are required' } });
  send(res, 200, { data: { appId: `app${Date.now().toString(36)}`, name: body.name, region: body.region, version: body.version } });
}

/**
 * A `fetch` that records every URL the client asks for and sends the request to the local platform instead,
 * with the addressed host in `x-original-host`.
 */
export function forwardingFetch(platform: Platform): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const forward: typeof fetch = (input, init) => {
    const url = new URL(String(input));
    urls.push(url.href);
    const headers = { ...(init?.headers as Record<string, string>), 'x-original-host': url.host };
    return fetch(`${platform.url}${url.pathname}${url.search}`, { ...init, headers });
  };
  return { fetch: forward, urls };
}
