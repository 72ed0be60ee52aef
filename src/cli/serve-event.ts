/**
 * `serve`'s translation, both ways: an HTTP request into the API Gateway HTTP API (payload format 2.0) event
 * Lambda would receive, and what a handler returns into the HTTP answer API Gateway would send, including its
 * shortcuts (a result without `statusCode` is a 200 JSON body). Any Lambda handler, not only `lambdaHandler`.
 */
import { randomUUID } from 'node:crypto';
import type { ApiGatewayProxyEventV2 } from '../../adapters/lambda/index.js';

export interface HttpRequest {
  method: string;
  /** The path and query as requested, like `/webhooks?a=1`. */
  url: string;
  /** The raw header list (name, value, name, value…), as node gives it. */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
  protocol: string;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** Repeated headers are comma-joined, names lower case, as API Gateway does (cookies go apart). */
function joinedHeaders(rawHeaders: readonly string[]): { headers: Record<string, string>; cookies: string[] } {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    if (name === 'cookie') cookies.push(...value.split(/;\s*/).filter((cookie) => cookie !== ''));
    else headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  return { headers, cookies };
}

/** API Gateway passes a body as text when it is, base64 otherwise: the handler must see the very bytes sent. */
function encodedBody(body: Buffer): { body?: string; isBase64Encoded: boolean } {
  if (body.length === 0) return { isBase64Encoded: false };
  const text = body.toString('utf8');
  return Buffer.from(text, 'utf8').equals(body) ? { body: text, isBase64Encoded: false } : { body: body.toString('base64'), isBase64Encoded: true };
}

function queryParameters(rawQuery: string): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) parameters[name] = parameters[name] === undefined ? value : `${parameters[name]},${value}`;
  return Object.keys(parameters).length > 0 ? parameters : undefined;
}

/** `10/Mar/2020:05:16:23 +0000`, API Gateway's requestContext.time. */
function gatewayTime(date: Date): string {
  const [, day, month, year, time] = /^\w+, (\d+) (\w+) (\d+) (\S+)/.exec(date.toUTCString()) ?? [];
  return `${day}/${month}/${year}:${time} +0000`;
}

export function toHttpApiEvent(request: HttpRequest, now = new Date()): ApiGatewayProxyEventV2 {
  const { headers, cookies } = joinedHeaders(request.rawHeaders);
  const query = request.url.indexOf('?');
  const rawPath = query === -1 ? request.url : request.url.slice(0, query);
  const rawQueryString = query === -1 ? '' : request.url.slice(query + 1);
  const queryStringParameters = queryParameters(rawQueryString);
  const domainName = headers.host ?? 'localhost';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0] as string,
      http: { method: request.method, path: rawPath, protocol: request.protocol, sourceIp: request.sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: gatewayTime(now),
      timeEpoch: now.getTime(),
    },
    ...encodedBody(request.body),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The answer API Gateway (payload 2.0) makes of a handler's result. */
export function toHttpAnswer(result: unknown): HttpAnswer {
  if (!isRecord(result) || typeof result.statusCode !== 'number') {
    // No statusCode: API Gateway takes the whole result as a JSON body (a string as it is).
    const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
    return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
  }
  const headers: Record<string, string | string[]> = {};
  for (const source of [result.multiValueHeaders, result.headers]) {
    if (!isRecord(source)) continue;
    for (const [name, value] of Object.entries(source)) headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  if (Array.isArray(result.cookies) && result.cookies.length > 0) headers['set-cookie'] = result.cookies.map(String);
  const text = typeof result.body === 'string' ? result.body : '';
  const body = result.isBase64Encoded === true ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
  return { status: result.statusCode, headers, body };
}
