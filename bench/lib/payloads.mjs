/**
 * What the benchmarks send: the body of `fixtures/message_sent.json` (compact, ~1 KB) with a Basic auth
 * header, or a GitHub-shaped `issue_comment` payload (~1 KB) signed with HMAC-SHA256 for @octokit/webhooks.
 *
 * Every request carries a distinct body (the message id, or the comment id, is a sequence number). The
 * receiver drops repeats of a delivery (dedupe is on by default, keyed by the body's digest), so identical
 * bodies would turn most requests into cheap "already seen" answers and the handler-call check would fail.
 * Bare servers get exactly the same bytes, so the load generator does the same work for every server.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);

export const CREDENTIALS = { username: 'bench-user', password: 'bench-password-0123456789' };
export const AUTHORIZATION = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64')}`;
export const GITHUB_SECRET = 'bench-github-secret';
export const PATH = '/webhooks';

const messageSent = JSON.parse(readFileSync(new URL('fixtures/message_sent.json', root), 'utf8'));
const issueComment = JSON.parse(readFileSync(new URL('../fixtures/github-issue_comment.json', import.meta.url), 'utf8'));

/** A compact message_sent body whose message id is `seq`. Same length (±digits) as the fixture. */
export function chatBody(seq) {
  messageSent.data.message.id = String(seq);
  return JSON.stringify(messageSent);
}

/** A compact GitHub issue_comment body whose comment id is `seq`. */
export function githubBody(seq) {
  issueComment.comment.id = seq;
  return JSON.stringify(issueComment);
}

/** Header lines (without the request line, Host and Connection) for one request of a kind. */
export function headersFor(kind, body, seq) {
  if (kind === 'octokit') {
    const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
    return {
      'content-type': 'application/json',
      'x-github-event': 'issue_comment',
      'x-github-delivery': `72d3162e-cc78-11e3-81ab-${String(seq).padStart(12, '0')}`,
      'x-hub-signature-256': signature,
      'user-agent': 'GitHub-Hookshot/bench',
    };
  }
  // The platform sends `Application/json` (issue 27); the bare servers get the same bytes.
  return { 'content-type': 'Application/json', authorization: AUTHORIZATION, 'user-agent': 'chat-webhooks-bench' };
}

export function bodyFor(kind, seq) {
  return kind === 'octokit' ? githubBody(seq) : chatBody(seq);
}

/** The raw bytes of one HTTP/1.1 request, as autocannon writes them. */
export function rawRequest(kind, seq, port) {
  const body = bodyFor(kind, seq);
  const headers = headersFor(kind, body, seq);
  let head = `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return Buffer.from(head + body);
}

/** An API Gateway HTTP API (payload format 2.0) event carrying the chat body. */
export function apiGatewayV2Event(seq) {
  const body = chatBody(seq);
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: PATH,
    rawQueryString: '',
    headers: {
      accept: '*/*',
      authorization: AUTHORIZATION,
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'Application/json',
      host: 'abc123.execute-api.us-east-1.amazonaws.com',
      'user-agent': 'chat-webhooks-bench',
      'x-amzn-trace-id': `Root=1-67891233-${String(seq).padStart(24, '0')}`,
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method: 'POST', path: PATH, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'chat-webhooks-bench' },
      requestId: `req-${seq}`,
      routeKey: 'POST /webhooks',
      stage: '$default',
      time: '21/Nov/2025:04:53:43 +0000',
      timeEpoch: 1763700823000,
    },
    body,
    isBase64Encoded: false,
  };
}
