/**
 * SQS, stood in for: there is no SQS implementation to run here, so the tests send through the real
 * `@aws-sdk/client-sqs` (its JSON protocol, signing, retries and MD5 checks of what SQS answers) to this
 * small local HTTP endpoint, which answers the calls the receiver makes (SendMessageBatch, SendMessage)
 * as SQS documents them, and models what happens to the messages afterwards: visibility timeouts, receive
 * counts, a redrive policy to a dead-letter queue, FIFO's 5-minute deduplication and message-group order.
 * `deliver` then plays Lambda's event source mapping: it builds real SQS events from the stored messages,
 * invokes the consumer, and deletes the records its answer does not list in `batchItemFailures`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import type { SqsBatchResponse, SqsEvent, SqsRecord } from '../../../adapters/aws/index.js';

type Attribute = { DataType: string; StringValue?: string };
interface SentEntry {
  Id: string;
  MessageBody: string;
  MessageAttributes?: Record<string, Attribute>;
  MessageDeduplicationId?: string;
  MessageGroupId?: string;
}

export interface Message {
  messageId: string;
  body: string;
  attributes: Record<string, Attribute>;
  groupId?: string;
  deduplicationId?: string;
  sentAt: number;
  sequence: number;
  receiveCount: number;
  inFlight: boolean;
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const FIFO_DEDUPLICATION_MS = 5 * 60 * 1000;

export class Queue {
  readonly messages: Message[] = [];
  readonly #deduplication = new Map<string, { messageId: string; at: number }>();
  #sequence = 0;

  constructor(
    readonly url: string,
    readonly deadLetter?: Queue,
    readonly maxReceiveCount = 3,
  ) {}

  get fifo(): boolean {
    return this.url.endsWith('.fifo');
  }

  get arn(): string {
    return `arn:aws:sqs:us-east-1:123456789012:${this.url.split('/').pop()}`;
  }

  /** SendMessage(Batch)'s work for one entry: stored, or (FIFO) recognised as a repeat and dropped. */
  send(entry: SentEntry): { messageId: string; sequence?: string } {
    const now = Date.now();
    // SQS takes only XML 1.0's characters, in bodies and attribute values alike, and no empty value.
    const values = [entry.MessageBody, ...Object.values(entry.MessageAttributes ?? {}).map((value) => value.StringValue ?? '')];
    if (values.some((value) => /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.test(value))) {
      throw new SqsFault('InvalidMessageContents', 'Invalid binary character was found in the message body or attributes.');
    }
    if (values.slice(1).includes('')) throw new SqsFault('InvalidParameterValue', 'Message attribute value must not be empty.');
    if (this.fifo) {
      if (!entry.MessageGroupId) throw new SqsFault('MissingParameter', 'The request must contain the parameter MessageGroupId.');
      if (!entry.MessageDeduplicationId) throw new SqsFault('InvalidParameterValue', 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly');
      const seen = this.#deduplication.get(entry.MessageDeduplicationId);
      if (seen && now - seen.at < FIFO_DEDUPLICATION_MS) return { messageId: seen.messageId };
    }
    const message: Message = {
      messageId: randomUUID(),
      body: entry.MessageBody,
      attributes: entry.MessageAttributes ?? {},
      sentAt: now,
      sequence: ++this.#sequence,
      receiveCount: 0,
      inFlight: false,
      ...(entry.MessageGroupId ? { groupId: entry.MessageGroupId } : {}),
      ...(entry.MessageDeduplicationId ? { deduplicationId: entry.MessageDeduplicationId } : {}),
    };
    if (entry.MessageDeduplicationId) this.#deduplication.set(entry.MessageDeduplicationId, { messageId: message.messageId, at: now });
    this.messages.push(message);
    return { messageId: message.messageId, ...(this.fifo ? { sequence: String(message.sequence).padStart(20, '0') } : {}) };
  }

  /** Visible messages, up to `max`: FIFO in order, skipping groups with a message in flight. */
  receive(max: number): Message[] {
    const busy = new Set(this.messages.filter((m) => m.inFlight && m.groupId).map((m) => m.groupId));
    const taken: Message[] = [];
    for (const message of this.messages) {
      if (taken.length === max) break;
      if (message.inFlight || (this.fifo && busy.has(message.groupId))) continue;
      taken.push(message);
    }
    for (const message of taken) {
      message.inFlight = true;
      message.receiveCount += 1;
    }
    return taken;
  }

  delete(messageIds: Iterable<string>): void {
    const gone = new Set(messageIds);
    for (let index = this.messages.length - 1; index >= 0; index -= 1) {
      if (gone.has((this.messages[index] as Message).messageId)) this.messages.splice(index, 1);
    }
  }

  /** The visibility timeout of every message in flight runs out: visible again, or dead-lettered. */
  timeOut(): void {
    for (const message of [...this.messages]) {
      if (!message.inFlight) continue;
      message.inFlight = false;
      if (this.deadLetter && message.receiveCount >= this.maxReceiveCount) {
        this.delete([message.messageId]);
        this.deadLetter.messages.push({ ...message, receiveCount: 0 });
      }
    }
  }

  /** Lambda's SQS event for these messages, as the event source mapping builds it. */
  event(messages: Message[]): SqsEvent {
    return { Records: messages.map((message) => this.#record(message)) };
  }

  #record(message: Message): SqsRecord {
    const attributes: SqsRecord['attributes'] = {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'AROAEXAMPLE:chat-webhooks-receiver',
      ApproximateFirstReceiveTimestamp: String(message.sentAt + 5),
    };
    if (this.fifo) {
      attributes.SequenceNumber = String(message.sequence).padStart(20, '0');
      attributes.MessageGroupId = message.groupId as string;
      attributes.MessageDeduplicationId = message.deduplicationId as string;
    }
    const messageAttributes: SqsRecord['messageAttributes'] = {};
    for (const [name, value] of Object.entries(message.attributes)) {
      messageAttributes[name] = { stringValue: value.StringValue as string, stringListValues: [], binaryListValues: [], dataType: value.DataType };
    }
    return {
      messageId: message.messageId,
      receiptHandle: Buffer.from(`${message.messageId}#${message.receiveCount}`).toString('base64'),
      body: message.body,
      attributes,
      messageAttributes,
      md5OfBody: md5(message.body),
      md5OfMessageAttributes: Object.keys(messageAttributes).length > 0 ? md5(JSON.stringify(messageAttributes)) : null,
      eventSource: 'aws:sqs',
      eventSourceARN: this.arn,
      awsRegion: 'us-east-1',
    };
  }
}

class SqsFault extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** What the endpoint does with the next requests: answer, fail (HTTP 500), or never answer. */
export type Behaviour = 'answer' | 'fail' | 'hang';

/** One endpoint for a test file, started before its tests and stopped after them: `const sqs = sqsPerSuite();`. */
export function sqsPerSuite(): SqsEndpoint {
  const sqs = new SqsEndpoint();
  beforeAll(async () => {
    await sqs.start();
  });
  afterAll(() => sqs.stop());
  return sqs;
}

export class SqsEndpoint {
  readonly queues = new Map<string, Queue>();
  /** Every call, as the SDK sent it. */
  readonly calls: Array<{ target: string; input: { QueueUrl: string; Entries?: SentEntry[] } }> = [];
  behaviour: Behaviour = 'answer';
  /** Entries answered as Failed (in a batch that otherwise succeeds) instead of sent. */
  refuse: (entry: SentEntry) => boolean = () => false;
  #server: Server | undefined;
  #hanging: ServerResponse[] = [];
  origin = '';

  async start(): Promise<this> {
    this.#server = createServer((request, response) => void this.#serve(request, response));
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }

  /** A queue (a name ending in .fifo makes a FIFO queue), with a dead-letter queue after `maxReceiveCount` receives. */
  queue(name: string, maxReceiveCount = 3): Queue {
    const deadLetter = new Queue(`${this.origin}/123456789012/${name.replace(/(\.fifo)?$/, '-dlq$1')}`);
    const queue = new Queue(`${this.origin}/123456789012/${name}`, deadLetter, maxReceiveCount);
    this.queues.set(queue.url, queue);
    return queue;
  }

  /** A real SDK client for this endpoint (no retry delays worth waiting for; dummy credentials). */
  client(): SQSClient {
    return new SQSClient({
      endpoint: this.origin,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 2,
    });
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    this.calls.push({ target, input });
    if (this.behaviour === 'hang') return void this.#hanging.push(response);
    try {
      if (this.behaviour === 'fail') throw new SqsFault('InternalError', 'We encountered an internal error. Please try again.', 500);
      if (!request.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) throw new SqsFault('MissingAuthenticationToken', 'Request is missing Authentication Token', 403);
      const queue = this.queues.get(input.QueueUrl);
      if (!queue) throw new SqsFault('QueueDoesNotExist', 'The specified queue does not exist.');
      reply(response, 200, this.#answer(target, input, queue));
    } catch (error) {
      const fault = error instanceof SqsFault ? error : new SqsFault('InternalError', String(error), 500);
      response.setHeader('x-amzn-query-error', `AWS.SimpleQueueService.${fault.code};${fault.status < 500 ? 'Sender' : 'Receiver'}`);
      reply(response, fault.status, { __type: `com.amazonaws.sqs#${fault.code}`, message: fault.message });
    }
  }

  #answer(target: string, input: { Entries?: SentEntry[] } & SentEntry, queue: Queue): object {
    if (target === 'SendMessage') {
      const { messageId, sequence } = queue.send(input);
      return { MessageId: messageId, MD5OfMessageBody: md5(input.MessageBody), ...(sequence ? { SequenceNumber: sequence } : {}) };
    }
    if (target !== 'SendMessageBatch') throw new SqsFault('UnsupportedOperation', `${target} is not modelled here.`);
    const entries = input.Entries ?? [];
    if (entries.length === 0) throw new SqsFault('AWS.SimpleQueueService.EmptyBatchRequest', 'There should be at least one SendMessageBatchRequestEntry in the request.');
    if (entries.length > 10) throw new SqsFault('AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 'Maximum number of entries per request are 10.');
    const total = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.MessageBody), 0);
    if (total > 256 * 1024) throw new SqsFault('AWS.SimpleQueueService.BatchRequestTooLong', 'Batch requests cannot be longer than 262144 bytes.');
    const Successful: object[] = [];
    const Failed: object[] = [];
    for (const entry of entries) {
      if (this.refuse(entry)) {
        Failed.push({ Id: entry.Id, SenderFault: false, Code: 'InternalError', Message: 'Try again.' });
        continue;
      }
      try {
        const { messageId, sequence } = queue.send(entry);
        Successful.push({ Id: entry.Id, MessageId: messageId, MD5OfMessageBody: md5(entry.MessageBody), ...(sequence ? { SequenceNumber: sequence } : {}) });
      } catch (error) {
        const fault = error as SqsFault;
        Failed.push({ Id: entry.Id, SenderFault: true, Code: fault.code, Message: fault.message });
      }
    }
    return { Successful, Failed };
  }
}

function reply(response: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID(), 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

type Consumer = (event: SqsEvent, context: { getRemainingTimeInMillis(): number }) => Promise<SqsBatchResponse>;

/**
 * Lambda's event source mapping, one poll: up to `batchSize` messages as one invocation; the records not
 * listed as failed are deleted, the failed ones stay in flight until their visibility timeout (`timeOut`).
 * A thrown error fails the whole batch. Resolves the batch's messages and the answer.
 */
export async function deliver(queue: Queue, consumer: Consumer, batchSize = 10, remainingMs = 30_000) {
  const messages = queue.receive(batchSize);
  if (messages.length === 0) return { messages, failed: [] as string[] };
  const deadline = Date.now() + remainingMs;
  let failed: string[];
  try {
    const answer = await consumer(queue.event(messages), { getRemainingTimeInMillis: () => deadline - Date.now() });
    failed = answer.batchItemFailures.map((failure) => failure.itemIdentifier);
  } catch {
    failed = messages.map((message) => message.messageId);
  }
  queue.delete(messages.map((message) => message.messageId).filter((id) => !failed.includes(id)));
  return { messages, failed };
}
