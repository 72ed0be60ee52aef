// The receiver function (API Gateway → here): checks the Basic credentials and the event, sends it to the
// SQS queue, and answers 200 only once SQS has it (503 + Retry-After if SQS failed or the invocation's time
// ran short, so the platform sends it again). No handler runs here.
import { createWebhooks } from 'chat-webhooks';
import { sqsQueue } from 'chat-webhooks/aws';
import { lambdaHandler } from 'chat-webhooks/lambda';

const webhooks = createWebhooks({
  auth: { username: process.env.WEBHOOK_USERNAME, password: process.env.WEBHOOK_PASSWORD },
  inbox: sqsQueue({ queueUrl: process.env.QUEUE_URL }),
  consume: false,
  // SQS takes messages up to 256 KiB; the platform's bodies are far smaller (`data` is at most 10 KB).
  maxBodyBytes: 200 * 1024,
});
// Refused deliveries (401, 400, …) and sends that failed (503), with the raw body.
webhooks.onError((error) => console.error(JSON.stringify({ error: error.code, message: error.message })));

export const handler = lambdaHandler(webhooks, { path: '/webhooks' });
