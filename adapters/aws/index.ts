/**
 * Durable webhooks on AWS Lambda: API Gateway → a receiver function that answers once SQS has the event
 * (`sqsQueue`, the receiver's inbox) → SQS → a consumer function (`sqsHandler`) with partial batch answers,
 * each key claimed in DynamoDB (`dynamoIdempotency`) so a redelivery does not run the handlers again.
 * `@aws-sdk/client-sqs` and `@aws-sdk/client-dynamodb` (v3) are optional peers, each loaded when first used.
 */
export { sqsQueue } from './sqs-queue.js';
export type { SqsQueueOptions } from './sqs-queue.js';
export { sqsHandler } from './sqs-handler.js';
export type { SqsHandlerOptions, SqsLambdaHandler } from './sqs-handler.js';
export { dynamoIdempotency } from './dynamo.js';
export type { DynamoIdempotencyOptions } from './dynamo.js';
export { memoryIdempotency } from './idempotency.js';
export type { Begin, IdempotencyStore, MemoryIdempotencyOptions } from './idempotency.js';
export { ATTRIBUTES as MESSAGE_ATTRIBUTES, deduplicationId, defaultGroupId } from './sqs-message.js';
export type { LambdaContext, SqsBatchResponse, SqsEvent, SqsMessageAttribute, SqsRecord } from './shapes.js';
