/**
 * AWS Lambda adapter: `export const handler = lambdaHandler(webhooks)`. One handler serves API Gateway REST
 * APIs (payload 1.0, also HTTP APIs set to 1.0), HTTP APIs (payload 2.0), function URLs and Application Load
 * Balancer targets; the kind is read from each event, and the result takes the shape that kind expects.
 */
import { STATUS_CODES } from 'node:http';
import type { HandleOptions, Webhooks } from '../src/webhooks.js';
import type { BodyReader, WebhookResponse } from '../src/http.js';
import type { ParsedWebhook } from '../src/events.js';
import { WebhookError } from '../src/errors.js';

// ---- Event and result formats, as AWS documents them (only what the adapter and its users need typed) ----

type StringMap = Record<string, string | undefined>;
type MultiStringMap = Record<string, string[] | undefined>;

/** API Gateway REST API proxy integration (and HTTP API payload format 1.0). Header names keep the sender's case. */
export interface ApiGatewayProxyEvent {
  /** Present ("1.0") only when an HTTP API sends payload format 1.0. */
  version?: string;
  resource: string;
  /** The request path without the stage (with a custom domain, including its base path mapping). */
  path: string;
  httpMethod: string;
  headers: StringMap | null;
  multiValueHeaders: MultiStringMap | null;
  queryStringParameters: StringMap | null;
  multiValueQueryStringParameters: MultiStringMap | null;
  pathParameters: StringMap | null;
  stageVariables: StringMap | null;
  requestContext: {
    accountId: string;
    apiId: string;
    authorizer?: Record<string, unknown> | null;
    domainName?: string;
    domainPrefix?: string;
    extendedRequestId?: string;
    httpMethod: string;
    identity: {
      accessKey?: string | null;
      accountId?: string | null;
      apiKey?: string | null;
      apiKeyId?: string | null;
      caller?: string | null;
      clientCert?: Record<string, unknown> | null;
      cognitoAuthenticationProvider?: string | null;
      cognitoAuthenticationType?: string | null;
      cognitoIdentityId?: string | null;
      cognitoIdentityPoolId?: string | null;
      principalOrgId?: string | null;
      sourceIp: string;
      user?: string | null;
      userAgent?: string | null;
      userArn?: string | null;
    };
    path: string;
    protocol?: string;
    requestId: string;
    requestTime?: string;
    requestTimeEpoch: number;
    resourceId?: string;
    resourcePath: string;
    stage: string;
  };
  body: string | null;
  isBase64Encoded: boolean;
}

/** API Gateway HTTP API payload format 2.0. Header names are lower case; repeated headers are comma-joined. */
export interface ApiGatewayProxyEventV2 {
  version: '2.0';
  routeKey: string;
  /** With a named stage (not `$default`) this starts with `/<stage>`. */
  rawPath: string;
  rawQueryString: string;
  cookies?: string[];
  headers: StringMap;
  queryStringParameters?: StringMap;
  pathParameters?: StringMap | null;
  stageVariables?: StringMap | null;
  requestContext: {
    accountId: string;
    apiId: string;
    authentication?: Record<string, unknown> | null;
    authorizer?: Record<string, unknown>;
    /** `<api-id>.execute-api.<region>.amazonaws.com`, a custom domain, or `<url-id>.lambda-url.<region>.on.aws`. */
    domainName: string;
    domainPrefix: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    routeKey: string;
    stage: string;
    time: string;
    timeEpoch: number;
  };
  body?: string;
  isBase64Encoded: boolean;
}

/** Lambda function URLs send payload format 2.0, from a `*.lambda-url.<region>.on.aws` domain. */
export type LambdaFunctionUrlEvent = ApiGatewayProxyEventV2;

/**
 * Application Load Balancer target event. Exactly one of `headers` and `multiValueHeaders` is present:
 * `multiValueHeaders` when the target group has multi-value headers enabled.
 */
export interface AlbEvent {
  requestContext: { elb: { targetGroupArn: string } };
  httpMethod: string;
  path: string;
  queryStringParameters?: StringMap;
  multiValueQueryStringParameters?: MultiStringMap;
  headers?: StringMap;
  multiValueHeaders?: MultiStringMap;
  body: string;
  isBase64Encoded: boolean;
}

export type LambdaHttpEvent = ApiGatewayProxyEvent | ApiGatewayProxyEventV2 | AlbEvent;

export interface ApiGatewayProxyResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

export interface ApiGatewayProxyResultV2 {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** An ALB answer must use `multiValueHeaders` exactly when the request came with them. */
export interface AlbResult {
  statusCode: number;
  statusDescription: string;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded: false;
}

export type LambdaHttpResult = ApiGatewayProxyResult | ApiGatewayProxyResultV2 | AlbResult;

/** The part of the Lambda context object the adapter reads. */
export interface LambdaContext {
  getRemainingTimeInMillis?(): number;
  [key: string]: unknown;
}

export interface LambdaHandlerOptions {
  /**
   * How long the handlers may run before the result is returned (Lambda freezes the function once it has
   * answered). Handlers still running then are reported to onError as `handler_timeout` and the delivery is
   * answered 200 anyway. Default 1500 ms, inside the platform's 2 s delivery timeout; never more than the
   * invocation's remaining time allows.
   */
  timeBudgetMs?: number;
  /**
   * Hand each accepted event to a queue (an SQS send, say) instead of running the handlers in this function.
   * The answer comes once it resolved; a rejection is answered 503 so the platform retries.
   */
  enqueue?: (event: ParsedWebhook) => Promise<unknown>;
  /** Only requests to this path are deliveries; others are answered 404. A named HTTP API stage prefix is ignored. */
  path?: string;
}

export type LambdaHttpHandler = (event: LambdaHttpEvent, context?: LambdaContext) => Promise<LambdaHttpResult>;

const DEFAULT_TIME_BUDGET_MS = 1500;
/** Time kept back from the invocation's remaining time for onError reports and returning the result. */
const SAFETY_MARGIN_MS = 300;
/** How much longer than the budget the adapter waits for the receiver's own timeout to settle `done`. */
const GRACE_MS = 100;

export function lambdaHandler(webhooks: Webhooks, options: LambdaHandlerOptions = {}): LambdaHttpHandler {
  const { timeBudgetMs = DEFAULT_TIME_BUDGET_MS, enqueue, path } = options;
  if (!(timeBudgetMs > 0 && timeBudgetMs !== Infinity)) {
    throw new WebhookError('invalid_options', '`timeBudgetMs` must be a positive number of milliseconds.');
  }

  // Exactly two parameters and async: Node 24 runtimes refuse callback-style handlers.
  return async (event, context) => {
    const kind = kindOf(event);
    const request = toRequest(event, kind);
    if (path !== undefined && !request.paths.includes(path)) {
      return toResult(event, kind, { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found.' });
    }
    const remaining = context?.getRemainingTimeInMillis?.();
    // At least 1 ms: 0 would mean "no limit" to the receiver.
    const budget = Math.max(1, Math.min(timeBudgetMs, remaining === undefined ? Infinity : remaining - SAFETY_MARGIN_MS));
    const handleOptions: HandleOptions = enqueue ? { enqueue, handlerTimeoutMs: budget } : { handlerTimeoutMs: budget };
    const response = await webhooks.handle(request, handleOptions);
    // Handlers (or onError reports of a refused request) run after the response is produced; the function is
    // frozen once it returns, so they must finish first.
    await settleWithin(response.done, budget + GRACE_MS);
    return toResult(event, kind, response);
  };
}

type Kind = 'v1' | 'v2' | 'alb';

function kindOf(event: LambdaHttpEvent): Kind {
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

interface LambdaRequest {
  method: string;
  headers: Record<string, string | string[]>;
  body: BodyReader;
  /** The paths this request may be matched under. */
  paths: string[];
}

function toRequest(event: LambdaHttpEvent, kind: Kind): LambdaRequest {
  if (kind === 'v2') {
    const v2 = event as ApiGatewayProxyEventV2;
    const { stage } = v2.requestContext;
    const prefix = `/${stage}`;
    const paths = [v2.rawPath];
    if (stage !== '$default' && v2.rawPath.startsWith(`${prefix}/`)) paths.push(v2.rawPath.slice(prefix.length));
    return {
      method: v2.requestContext.http.method,
      headers: lowerCaseHeaders(v2.headers, undefined),
      body: bodyReader(v2.body, v2.isBase64Encoded),
      paths,
    };
  }
  const v1 = event as ApiGatewayProxyEvent | AlbEvent;
  return {
    method: v1.httpMethod,
    headers: lowerCaseHeaders(v1.headers, v1.multiValueHeaders),
    body: bodyReader(v1.body, v1.isBase64Encoded),
    paths: [v1.path],
  };
}

/**
 * Node-style headers (lower-case names, arrays for repeats, as the receiver reads them) from the event's
 * maps. `multiValueHeaders` holds every value when present; `headers` only the last of a repeat.
 */
function lowerCaseHeaders(
  single: StringMap | null | undefined,
  multi: MultiStringMap | null | undefined,
): Record<string, string | string[]> {
  const values: Record<string, string[]> = {};
  if (multi) {
    for (const [name, list] of Object.entries(multi)) {
      if (list) (values[name.toLowerCase()] ??= []).push(...list);
    }
  }
  if (single) {
    for (const [name, value] of Object.entries(single)) {
      const key = name.toLowerCase();
      if (value !== undefined && values[key] === undefined) values[key] = [value];
    }
  }
  const headers: Record<string, string | string[]> = {};
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
  return async (maxBytes) => {
    if (!body) return '';
    if (!isBase64Encoded) return body;
    // Every 4 base64 characters carry 3 bytes.
    const enough = Math.ceil((maxBytes + 1) / 3) * 4;
    return Buffer.from(body.length > enough ? body.slice(0, enough) : body, 'base64');
  };
}

function toResult(
  event: LambdaHttpEvent,
  kind: Kind,
  response: Pick<WebhookResponse, 'status' | 'headers' | 'body'>,
): LambdaHttpResult {
  // There is no connection to close behind a Lambda integration (API Gateway would remap the header).
  const { connection: _hopByHop, ...headers } = response.headers;
  if (kind === 'v2') return { statusCode: response.status, headers, body: response.body };
  if (kind === 'v1') return { statusCode: response.status, headers, body: response.body, isBase64Encoded: false };
  const statusDescription = `${response.status} ${STATUS_CODES[response.status] ?? ''}`.trim();
  const base = { statusCode: response.status, statusDescription, body: response.body, isBase64Encoded: false as const };
  if ((event as AlbEvent).multiValueHeaders) {
    const multiValueHeaders: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(headers)) multiValueHeaders[name] = [value];
    return { ...base, multiValueHeaders };
  }
  return { ...base, headers };
}

/**
 * Waits for `done`, but never past `ms`. The timer is kept referenced on purpose: it keeps the event loop
 * alive while a handler waits on something that never settles, so the receiver's own timeout gets to fire.
 */
function settleWithin(done: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([done, deadline]).finally(() => clearTimeout(timer));
}
