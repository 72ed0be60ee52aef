// An AWS Lambda function receiving the chat platform's webhooks through API Gateway (REST or HTTP API),
// a function URL or an Application Load Balancer: deploy with the handler set to `lambda.handler`.
// Run locally: npm run build && node examples/lambda.mjs   (invokes the handler with a sample HTTP API event,
// once with the right credentials and once with a wrong password, to show the 200 and the 401)
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createWebhooks } from 'chat-webhooks';
import { lambdaHandler } from 'chat-webhooks/lambda';
import { basicAuthHeader } from 'chat-webhooks/testing';

const username = process.env.WEBHOOK_USERNAME ?? 'demo';
const password = process.env.WEBHOOK_PASSWORD ?? 'demo-password';

const webhooks = createWebhooks({ auth: { username, password } });
webhooks.onAny((event) => console.log(`${event.trigger}: ${JSON.stringify(event.data).slice(0, 100)}`));
webhooks.onError((error) => console.log(`rejected ${error.code}: ${error.message}`));

// Handlers run before the function answers, within 1.5 s. To run them elsewhere instead, hand events to a queue:
// lambdaHandler(webhooks, { enqueue: (event) => sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(event) })) })
export const handler = lambdaHandler(webhooks);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(`Basic auth: username "${username}", password "${password}"`);
  const body = readFileSync(new URL('../fixtures/message_sent.json', import.meta.url), 'utf8');
  const context = { getRemainingTimeInMillis: () => 3000 };
  for (const [label, authorization] of [
    ['right credentials', basicAuthHeader(username, password)],
    ['wrong password', basicAuthHeader(username, 'not-the-password')],
  ]) {
    const { statusCode, headers } = await handler(httpApiEvent(body, authorization), context);
    console.log(`${label}: ${statusCode}${headers?.['www-authenticate'] ? ` (WWW-Authenticate: ${headers['www-authenticate']})` : ''}`);
  }
}

/** An API Gateway HTTP API (payload format 2.0) event, as Lambda receives it. */
function httpApiEvent(body, authorization) {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: {
      authorization,
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'application/json',
      host: 'r3pmxmplak.execute-api.us-east-2.amazonaws.com',
      'user-agent': 'chat-platform-webhooks/1.0',
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'r3pmxmplak',
      domainName: 'r3pmxmplak.execute-api.us-east-2.amazonaws.com',
      domainPrefix: 'r3pmxmplak',
      http: { method: 'POST', path: '/webhooks', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'chat-platform-webhooks/1.0' },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey: 'POST /webhooks',
      stage: '$default',
      time: '10/Mar/2020:05:16:23 +0000',
      timeEpoch: 1583817383220,
    },
    body,
    isBase64Encoded: false,
  };
}
