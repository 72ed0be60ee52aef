/** Lambda's HTTP event and result formats, as AWS documents them (only what the adapter and its users need typed). */
export type StringMap = Record<string, string | undefined>;
export type MultiStringMap = Record<string, string[] | undefined>;

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
      /** @types/aws-lambda's `APIGatewayEventClientCertificate`: an object the adapter does not read. */
      clientCert?: object | null;
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
  /** `'2.0'`; typed as a string, as @types/aws-lambda types it, so that its events are accepted. */
  version: string;
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
    authentication?: object | null;
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
  /** A string; null as @types/aws-lambda types it (an empty body either way). */
  body: string | null;
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
