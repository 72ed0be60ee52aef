/**
 * sqsQueue's close() after a send that failed because no SQS client could be made (the SDK is not installed:
 * the built package runs from a folder where no peer resolves, test/support/peerless-package.ts). Each put
 * rejects with the missing peer's sentence, and close() resolves: there is no client to destroy. It used to
 * reject with the same error, so a receiver's close() (which closes its inbox) rejected too.
 */
import { describe, expect, it } from 'vitest';
import { peerlessPackage } from '../../support/peerless-package.js';

const peerless = peerlessPackage();

describe('sqsQueue without @aws-sdk/client-sqs', () => {
  it('a put is answered 503 with the sentence, and close() resolves, also the receiver’s', () => {
    const outcome = peerless.run(
      'sqs-close.mjs',
      `import { createWebhooks } from 'chat-webhooks';
import { sqsQueue } from 'chat-webhooks/aws';
import { buildRequest, createTestEvent } from 'chat-webhooks/testing';
const errors = [];
const webhooks = createWebhooks({ auth: false, inbox: sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/events' }), consume: false, logger: {} });
webhooks.onError((error) => errors.push(error.cause?.message ?? error.message));
const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
await response.done;
const closed = await webhooks.close().then(() => 'resolved', (error) => 'rejected: ' + error.message);
console.log(JSON.stringify({ status: response.status, errors, closed }));
`,
    );
    expect(outcome).toEqual({
      status: 503,
      errors: ['chat-webhooks/aws needs its optional peer @aws-sdk/client-sqs: npm install @aws-sdk/client-sqs'],
      closed: 'resolved',
    });
  });
});
