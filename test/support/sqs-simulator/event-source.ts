/**
 * Lambda's event source mapping for SQS, played over the simulator: it receives a batch through the real SDK
 * (ReceiveMessage, every attribute), invokes the consumer with the SQS event Lambda builds from it, and
 * deletes (DeleteMessageBatch) the records its answer does not list in `batchItemFailures`; the failed ones
 * stay in flight until their visibility timeout, then come back with a higher ApproximateReceiveCount.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message as SdkMessage } from '@aws-sdk/client-sqs';
import type { SqsBatchResponse, SqsEvent, SqsRecord } from '../../../adapters/aws/index.js';
import type { Message, SimulatedQueue } from './queue.js';
import { attributesMd5, type Attribute } from './wire.js';

export type Consumer = (event: SqsEvent, context: { getRemainingTimeInMillis(): number }) => Promise<SqsBatchResponse>;

const clients = new Map<string, SQSClient>();
function clientFor(queue: SimulatedQueue): SQSClient {
  const origin = new URL(queue.url).origin;
  let client = clients.get(origin);
  if (!client) {
    client = new SQSClient({ endpoint: origin, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, maxAttempts: 2 });
    clients.set(origin, client);
  }
  return client;
}

/** A record as Lambda writes it: message attributes in lower camel case, with (unused) list values. */
function record(queue: SimulatedQueue, message: { messageId: string; receiptHandle: string; body: string; md5OfBody: string }, system: Record<string, string>, attributes: Record<string, Attribute>): SqsRecord {
  const messageAttributes: SqsRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(attributes)) {
    messageAttributes[name] = { stringValue: value.StringValue as string, stringListValues: [], binaryListValues: [], dataType: value.DataType };
  }
  return {
    ...message,
    attributes: system as unknown as SqsRecord['attributes'],
    messageAttributes,
    md5OfMessageAttributes: Object.keys(attributes).length > 0 ? attributesMd5(attributes) : null,
    eventSource: 'aws:sqs',
    eventSourceARN: queue.arn,
    awsRegion: 'us-east-1',
  };
}

/** Lambda's SQS event for messages received in process (`queue.receive`), for tests that build records by hand. */
export function lambdaEvent(queue: SimulatedQueue, messages: Message[]): SqsEvent {
  return {
    Records: messages.map((message) =>
      record(queue, { messageId: message.messageId, receiptHandle: message.receipt as string, body: message.body, md5OfBody: queue.md5OfBody(message) }, queue.systemAttributes(message), message.attributes),
    ),
  };
}

const fromSdk = (queue: SimulatedQueue, message: SdkMessage): SqsRecord =>
  record(
    queue,
    { messageId: message.MessageId as string, receiptHandle: message.ReceiptHandle as string, body: message.Body as string, md5OfBody: message.MD5OfBody as string },
    (message.Attributes ?? {}) as Record<string, string>,
    (message.MessageAttributes ?? {}) as Record<string, Attribute>,
  );

/**
 * The failed records of an answer, as Lambda reads it: no answer or no list is a complete success; a thrown
 * error, a list that is not one, or one naming a record not in the batch (an empty or missing itemIdentifier
 * included) is a complete failure.
 */
function failedOf(records: SqsRecord[], answer: SqsBatchResponse | Error | undefined): string[] {
  const all = records.map((r) => r.messageId);
  if (answer instanceof Error) return all;
  const failures = answer?.batchItemFailures as unknown;
  if (failures === undefined || failures === null) return [];
  if (!Array.isArray(failures)) return all;
  const named = failures.map((failure: { itemIdentifier?: unknown } | null) => failure?.itemIdentifier);
  return named.every((id) => typeof id === 'string' && all.includes(id)) ? (named as string[]) : all;
}

/** A batch received through the SDK as Lambda receives it (every attribute), as the SQS event Lambda builds. */
export async function receiveEvent(queue: SimulatedQueue, batchSize = 10): Promise<SqsEvent> {
  const received = await clientFor(queue).send(
    new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: batchSize, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }),
  );
  return { Records: (received.Messages ?? []).map((message) => fromSdk(queue, message)) };
}

/**
 * One poll: up to `batchSize` messages received through the SDK as one invocation, then the succeeded ones
 * deleted. Resolves the records the consumer was given and the message ids that failed.
 */
export async function deliver(queue: SimulatedQueue, consumer: Consumer, batchSize = 10, remainingMs = 30_000) {
  const { Records: records } = await receiveEvent(queue, batchSize);
  if (records.length === 0) return { messages: records, failed: [] as string[] };
  const deadline = Date.now() + remainingMs;
  const answer = await consumer({ Records: records }, { getRemainingTimeInMillis: () => deadline - Date.now() }).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  const failed = failedOf(records, answer);
  const done = records.filter((r) => !failed.includes(r.messageId));
  if (done.length > 0) {
    const entries = done.map((r, index) => ({ Id: `d${index}`, ReceiptHandle: r.receiptHandle }));
    const { Failed = [] } = await clientFor(queue).send(new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: entries }));
    if (Failed.length > 0) throw new Error(`DeleteMessageBatch failed: ${JSON.stringify(Failed)}`);
  }
  return { messages: records, failed };
}
