/**
 * Lambda events as AWS sends them, modelled on AWS's documented examples of each format: API Gateway REST API
 * proxy integration (payload 1.0), HTTP API (payload 2.0), function URLs and Application Load Balancer targets.
 * Each builder takes the HTTP request to wrap and whether the body arrives base64-encoded.
 */
import type {
  AlbEvent,
  ApiGatewayProxyEvent,
  ApiGatewayProxyEventV2,
  LambdaContext,
  LambdaFunctionUrlEvent,
} from '../../adapters/lambda/index.js';

export interface EventInput {
  method: string;
  /** Lower-case names, as a client's request carries them (node's view). */
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Send the body base64-encoded with `isBase64Encoded: true`. */
  base64?: boolean;
  path?: string;
  /** HTTP API, function URLs and ALB pass the client's Content-Length; `false` leaves it out. */
  contentLength?: boolean;
}

const PATH = '/webhooks';

function encodeBody(input: EventInput): { body: string | undefined; isBase64Encoded: boolean } {
  if (input.body === undefined) return { body: undefined, isBase64Encoded: false };
  const bytes = Buffer.isBuffer(input.body) ? input.body : Buffer.from(input.body, 'utf8');
  return input.base64
    ? { body: bytes.toString('base64'), isBase64Encoded: true }
    : { body: bytes.toString('utf8'), isBase64Encoded: false };
}

function contentLength(input: EventInput): Record<string, string> {
  if (input.body === undefined || input.contentLength === false) return {};
  return { 'content-length': String(Buffer.isBuffer(input.body) ? input.body.length : Buffer.byteLength(input.body)) };
}

/** "content-type" → "Content-Type": how most clients spell them, and API Gateway v1 keeps the sender's case. */
export const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/** REST API (payload 1.0): `headers` has the last value of each, `multiValueHeaders` all of them, both in the sender's case. */
export function restApiEvent(input: EventInput, spell: (name: string) => string = titleCase): ApiGatewayProxyEvent {
  const path = input.path ?? PATH;
  const { body, isBase64Encoded } = encodeBody(input);
  const sent: Record<string, string> = {
    Accept: '*/*',
    'Accept-Encoding': 'gzip, deflate',
    'CloudFront-Forwarded-Proto': 'https',
    'CloudFront-Is-Desktop-Viewer': 'true',
    'CloudFront-Is-Mobile-Viewer': 'false',
    'CloudFront-Is-SmartTV-Viewer': 'false',
    'CloudFront-Is-Tablet-Viewer': 'false',
    'CloudFront-Viewer-Country': 'US',
    Host: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
    'User-Agent': 'chat-platform-webhooks/1.0',
    Via: '1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)',
    'X-Amz-Cf-Id': 'pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A==',
    'X-Amzn-Trace-Id': 'Root=1-5e66d96f-7491f09xmpl79d18acf3d050',
    'X-Forwarded-For': '54.240.196.186, 54.182.214.83',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
  };
  for (const [name, value] of Object.entries(input.headers)) sent[spell(name)] = value;
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(sent)) multiValueHeaders[name] = [value];
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: input.method,
    headers: sent,
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { proxy: path.slice(1) },
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'gy415nuibc',
      authorizer: null,
      domainName: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'gy415nuibc',
      extendedRequestId: 'BQGojGkXoAMFXNw=',
      httpMethod: input.method,
      identity: {
        accessKey: null,
        accountId: null,
        caller: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '54.240.196.186',
        user: null,
        userAgent: 'chat-platform-webhooks/1.0',
        userArn: null,
      },
      path: `/prod${path}`,
      protocol: 'HTTP/1.1',
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      requestTime: '09/Apr/2015:12:34:56 +0000',
      requestTimeEpoch: 1428582896000,
      resourceId: 'roq9wj',
      resourcePath: '/{proxy+}',
      stage: 'prod',
    },
    body: body ?? null,
    isBase64Encoded,
  };
}

function v2Event(input: EventInput, host: string, apiId: string, stage: string): ApiGatewayProxyEventV2 {
  const path = input.path ?? PATH;
  const { body, isBase64Encoded } = encodeBody(input);
  const headers: Record<string, string> = {
    accept: '*/*',
    host,
    'user-agent': 'chat-platform-webhooks/1.0',
    'x-amzn-trace-id': 'Root=1-5e9f0c65-1de4d666d4dd26aced652b6c',
    'x-forwarded-for': '54.240.196.186',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...contentLength(input),
    ...input.headers,
  };
  const rawPath = stage === '$default' ? path : `/${stage}${path}`;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId,
      domainName: host,
      domainPrefix: apiId,
      http: {
        method: input.method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '54.240.196.186',
        userAgent: 'chat-platform-webhooks/1.0',
      },
      requestId: 'LV7fzho-PHcEJPw=',
      routeKey: '$default',
      stage,
      time: '21/Apr/2020:15:08:21 +0000',
      timeEpoch: 1587481701067,
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded,
  };
}

/** HTTP API (payload 2.0): lower-case header names, repeats comma-joined. */
export function httpApiEvent(input: EventInput, stage = '$default'): ApiGatewayProxyEventV2 {
  return v2Event(input, 'r3pmxmplak.execute-api.us-east-2.amazonaws.com', 'r3pmxmplak', stage);
}

/** Function URL: payload 2.0 from a `lambda-url` domain, with `pathParameters`/`stageVariables` null. */
export function functionUrlEvent(input: EventInput): LambdaFunctionUrlEvent {
  const event = v2Event(input, 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6.lambda-url.us-west-2.on.aws', 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6', '$default');
  return { ...event, requestContext: { ...event.requestContext, authentication: null }, pathParameters: null, stageVariables: null };
}

/** ALB target: `headers`, or `multiValueHeaders` (never both) when the target group enables multi-value headers. */
export function albEvent(input: EventInput, multiValue = false): AlbEvent {
  const { body, isBase64Encoded } = encodeBody(input);
  const headers: Record<string, string> = {
    accept: '*/*',
    connection: 'keep-alive',
    host: 'lambda-alb-123578498.us-east-1.elb.amazonaws.com',
    'user-agent': 'chat-platform-webhooks/1.0',
    'x-amzn-trace-id': 'Root=1-5c536348-3d683b8b04734faae651f476',
    'x-forwarded-for': '72.12.164.125',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...contentLength(input),
    ...input.headers,
  };
  const requestContext = {
    elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/lambda-279XGJDqGZ5rsrHC2Fjr/49e9d65c45c6791a' },
  };
  const common = { requestContext, httpMethod: input.method, path: input.path ?? PATH, body: body ?? '', isBase64Encoded };
  if (!multiValue) return { ...common, queryStringParameters: {}, headers };
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) multiValueHeaders[name] = [value];
  return { ...common, multiValueQueryStringParameters: {}, multiValueHeaders };
}

/** A Lambda context object as the Node.js runtime passes it. */
export function lambdaContext(remainingMs = 30_000): LambdaContext & { callbackWaitsForEmptyEventLoop: boolean } {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'chat-webhooks',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:chat-webhooks',
    memoryLimitInMB: '128',
    awsRequestId: '8f507cfc-xmpl-4697-b07a-ac58fc914c95',
    logGroupName: '/aws/lambda/chat-webhooks',
    logStreamName: '2020/04/21/[$LATEST]aa1b2c3d4e5f67890',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}
