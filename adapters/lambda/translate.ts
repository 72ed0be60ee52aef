/** Translation between Lambda's HTTP events and results and the receiver's normalized request and response. */
import type { BodyReader, HeaderSource, WebhookResponse } from '../../src/receive/index.js';
import type {
  AlbEvent,
  ApiGatewayProxyEvent,
  ApiGatewayProxyEventV2,
  LambdaHttpEvent,
  LambdaHttpResult,
  MultiStringMap,
  StringMap,
} from './shapes.js';
import { STATUS_TEXT } from './status-text.js';

export type Kind = 'v1' | 'v2' | 'alb';

const NO_HEADERS: HeaderSource = Object.freeze({});

export function kindOf(event: LambdaHttpEvent): Kind {
  const candidate = event as unknown as Record<string, unknown> | null;
  const context = candidate?.requestContext as Record<string, unknown> | undefined;
  if (candidate && typeof context === 'object' && context !== null) {
    if (candidate.version === '2.0' && typeof (context.http as { method?: unknown } | undefined)?.method === 'string') {
      return 'v2';
    }
    if (typeof candidate.httpMethod === 'string') return 'elb' in context ? 'alb' : 'v1';
  }
  throw new TypeError(
    'lambdaHandler got an event that is not an HTTP request: expected one from an API Gateway REST or HTTP API, ' +
      'a function URL or an Application Load Balancer.',
  );
}

export interface LambdaRequest {
  method: string;
  headers: HeaderSource;
  body: BodyReader;
  /** The paths this request may be matched under. */
  paths: string[];
}

export function toRequest(event: LambdaHttpEvent, kind: Kind): LambdaRequest {
  if (kind === 'v2') {
    const v2 = event as ApiGatewayProxyEventV2;
    const { rawPath } = v2;
    const paths = [rawPath];
    const stagePrefixed = stagePrefixLength(rawPath, v2.requestContext.stage);
    if (stagePrefixed > 0) paths.push(rawPath.slice(stagePrefixed));
    return {
      method: v2.requestContext.http.method,
      headers: headersOf(v2.headers, undefined),
      body: bodyReader(v2.body, v2.isBase64Encoded),
      paths,
    };
  }
  const v1 = event as ApiGatewayProxyEvent | AlbEvent;
  return {
    method: v1.httpMethod,
    headers: headersOf(v1.headers, v1.multiValueHeaders),
    body: bodyReader(v1.body, v1.isBase64Encoded),
    paths: [v1.path],
  };
}

/**
 * The length of `/<stage>` when the path starts with `/<stage>/` under a named stage, else 0. Compared in place:
 * building the prefix string would cost every invocation a concatenation.
 */
function stagePrefixLength(rawPath: string, stage: string): number {
  // A hand-made event may lack the stage: it then reads as its text ("undefined"), as in a template.
  const name = typeof stage === 'string' ? stage : `${stage as unknown as string}`;
  const end = name.length + 1;
  const prefixed = name !== '$default' && rawPath.charCodeAt(0) === SLASH && rawPath.startsWith(name, 1) && rawPath.charCodeAt(end) === SLASH;
  return prefixed ? end : 0;
}

const SLASH = 0x2f;

/**
 * The request's headers from the event's maps. `multiValueHeaders` holds every value when present (merged
 * into node-style headers: lower-case names, arrays for repeats, so a repeated Authorization is seen);
 * `headers` only the last of a repeat. Header names are the sender's: the merged maps have no prototype, so
 * `constructor` or `__proto__` is just another name.
 */
function headersOf(single: StringMap | null | undefined, multi: MultiStringMap | null | undefined): HeaderSource {
  // `headers` alone (HTTP API, function URL, most REST and ALB events) is passed as it is: the receiver reads
  // names in any letter case and only ever looks up the names it needs, so copying would only cost.
  if (!multi) return single ?? NO_HEADERS;
  const values: Record<string, string[]> = Object.create(null);
  for (const [name, list] of Object.entries(multi)) {
    if (list) (values[name.toLowerCase()] ??= []).push(...list);
  }
  if (single) {
    for (const [name, value] of Object.entries(single)) {
      const key = name.toLowerCase();
      if (value !== undefined && values[key] === undefined) values[key] = [value];
    }
  }
  const headers: Record<string, string | string[]> = Object.create(null);
  for (const [name, list] of Object.entries(values)) {
    if (list.length > 0) headers[name] = list.length === 1 ? (list[0] as string) : list;
  }
  return headers;
}

/**
 * The body is already in memory, but it is only decoded once the receiver asks (after the auth check), and a
 * base64 body is decoded no further than one byte past the limit.
 */
function bodyReader(body: string | null | undefined, isBase64Encoded: boolean): BodyReader {
  // Not async: a body in hand goes to the receiver at once, without a promise.
  return (maxBytes) => {
    if (!body) return '';
    if (!isBase64Encoded) return body;
    // Every 4 base64 characters carry 3 bytes.
    const enough = Math.ceil((maxBytes + 1) / 3) * 4;
    return Buffer.from(body.length > enough ? body.slice(0, enough) : body, 'base64');
  };
}

export function toResult(
  event: LambdaHttpEvent,
  kind: Kind,
  response: Pick<WebhookResponse, 'status' | 'headers' | 'body'>,
): LambdaHttpResult {
  const headers = resultHeaders(response.headers);
  if (kind === 'v2') return { statusCode: response.status, headers, body: response.body };
  if (kind === 'v1') return { statusCode: response.status, headers, body: response.body, isBase64Encoded: false };
  const statusDescription = `${response.status} ${STATUS_TEXT[response.status] ?? ''}`.trim();
  const base = { statusCode: response.status, statusDescription, body: response.body, isBase64Encoded: false as const };
  if ((event as AlbEvent).multiValueHeaders) {
    const multiValueHeaders: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(headers)) multiValueHeaders[name] = [value];
    return { ...base, multiValueHeaders };
  }
  return { ...base, headers };
}

/**
 * The result's own copy of the response headers, less `connection`: there is no connection to close behind a
 * Lambda integration (API Gateway would remap the header). Copied by a loop: the receiver's shared headers are
 * frozen, which sends a spread or a rest pattern down V8's slow path, property by property.
 */
function resultHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const copy: Record<string, string> = {};
  // The receiver's headers are plain objects: nothing enumerable is inherited.
  for (const name in headers) if (name !== 'connection') copy[name] = headers[name] as string;
  return copy;
}
