// The consumer function (SQS → here, with ReportBatchItemFailures): parses each record back into the typed
// event, claims its key in DynamoDB, runs the handlers, and answers the records that failed, which SQS
// delivers again (and moves to the dead-letter queue after maxReceiveCount receives).
import { createWebhooks } from 'chat-webhooks';
import { dynamoIdempotency, sqsHandler } from 'chat-webhooks/aws';
import { registerHandlers } from './handlers.mjs';

// No HTTP here, so no credentials: the receiver checked them before the event reached the queue.
const webhooks = registerHandlers(createWebhooks({ auth: false }));

export const handler = sqsHandler(webhooks, { idempotency: dynamoIdempotency({ tableName: process.env.TABLE_NAME }) });
