/** The simulator's answers to each SQS action, as the API reference shapes them (JSON protocol). */
import { createHash } from 'node:crypto';
import type { Message, SentEntry, SimulatedQueue } from './queue.js';
import { attributesMd5, messageBytes, SqsFault, type Attribute } from './wire.js';

export interface Input extends Partial<SentEntry> {
  QueueUrl: string;
  Entries?: Array<SentEntry & { ReceiptHandle?: string; VisibilityTimeout?: number }>;
  ReceiptHandle?: string;
  VisibilityTimeout?: number;
  MaxNumberOfMessages?: number;
  AttributeNames?: string[];
  MessageSystemAttributeNames?: string[];
  MessageAttributeNames?: string[];
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const MAX_BATCH = 10;

export function answer(target: string, input: Input, queue: SimulatedQueue, refuse: (entry: SentEntry) => boolean): object {
  switch (target) {
    case 'SendMessage':
      return sent(queue.send(input as SentEntry), input as SentEntry);
    case 'SendMessageBatch':
      return sendBatch(input, queue, refuse);
    case 'ReceiveMessage':
      return receive(input, queue);
    case 'DeleteMessage':
      return void queue.delete(required(input.ReceiptHandle, 'ReceiptHandle')), {};
    case 'DeleteMessageBatch':
      return perEntry(batch(input), (entry) => queue.delete(required(entry.ReceiptHandle, 'ReceiptHandle')));
    case 'ChangeMessageVisibility':
      return void queue.changeVisibility(required(input.ReceiptHandle, 'ReceiptHandle'), required(input.VisibilityTimeout, 'VisibilityTimeout')), {};
    case 'GetQueueAttributes': {
      const { visible, inFlight } = queue.counts();
      return { Attributes: { ApproximateNumberOfMessages: String(visible), ApproximateNumberOfMessagesNotVisible: String(inFlight), QueueArn: queue.arn } };
    }
    default:
      throw new SqsFault('UnsupportedOperation', `${target} is not simulated.`);
  }
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new SqsFault('MissingParameter', `The request must contain the parameter ${name}.`);
  return value;
}

function sent(result: ReturnType<SimulatedQueue['send']>, entry: SentEntry) {
  return {
    MessageId: result.messageId,
    MD5OfMessageBody: md5(entry.MessageBody),
    ...(result.md5OfAttributes ? { MD5OfMessageAttributes: result.md5OfAttributes } : {}),
    ...(result.sequence ? { SequenceNumber: result.sequence } : {}),
  };
}

/** The checks every batch action makes of the request as a whole, before any entry. */
function batch(input: Input): NonNullable<Input['Entries']> {
  const entries = input.Entries ?? [];
  if (entries.length === 0) throw new SqsFault('EmptyBatchRequest', 'There should be at least one entry in the request.');
  if (entries.length > MAX_BATCH) throw new SqsFault('TooManyEntriesInBatchRequest', 'Maximum number of entries per request are 10.');
  if (new Set(entries.map((entry) => entry.Id)).size !== entries.length) {
    throw new SqsFault('BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.');
  }
  return entries;
}

/** A batch answer: each entry succeeds or fails alone, and the call itself is a 200. */
function perEntry<E extends { Id: string }>(entries: E[], act: (entry: E) => object | void) {
  const Successful: object[] = [];
  const Failed: object[] = [];
  for (const entry of entries) {
    try {
      Successful.push({ Id: entry.Id, ...(act(entry) ?? {}) });
    } catch (error) {
      const fault = error instanceof SqsFault ? error : new SqsFault('InternalError', String(error), 500);
      Failed.push({ Id: entry.Id, SenderFault: fault.status < 500, Code: fault.code, Message: fault.message });
    }
  }
  return { Successful, Failed };
}

function sendBatch(input: Input, queue: SimulatedQueue, refuse: (entry: SentEntry) => boolean) {
  const entries = batch(input);
  const total = entries.reduce((sum, entry) => sum + messageBytes(entry), 0);
  if (total > queue.maximumMessageSize) {
    throw new SqsFault('BatchRequestTooLong', `Batch requests cannot be longer than ${queue.maximumMessageSize} bytes.`);
  }
  return perEntry(entries, (entry) => {
    if (refuse(entry)) throw new SqsFault('InternalError', 'Try again.', 500);
    return sent(queue.send(entry), entry);
  });
}

const wanted = (names: string[] | undefined, name: string) =>
  (names ?? []).some((pattern) => pattern === 'All' || pattern === '.*' || pattern === name || (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))));

function receive(input: Input, queue: SimulatedQueue) {
  const max = input.MaxNumberOfMessages ?? 1;
  if (!Number.isInteger(max) || max < 1 || max > MAX_BATCH) {
    throw new SqsFault('InvalidParameterValue', `Value ${max} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`);
  }
  const system = [...(input.AttributeNames ?? []), ...(input.MessageSystemAttributeNames ?? [])];
  const messages = queue.receive(max, input.VisibilityTimeout);
  return { Messages: messages.map((message) => received(queue, message, system, input.MessageAttributeNames)) };
}

function received(queue: SimulatedQueue, message: Message, system: string[], attributeNames: string[] | undefined) {
  const Attributes = Object.fromEntries(Object.entries(queue.systemAttributes(message)).filter(([name]) => wanted(system, name)));
  const MessageAttributes: Record<string, Attribute> = Object.fromEntries(Object.entries(message.attributes).filter(([name]) => wanted(attributeNames, name)));
  const withAttributes = Object.keys(MessageAttributes).length > 0;
  return {
    MessageId: message.messageId,
    ReceiptHandle: message.receipt,
    MD5OfBody: queue.md5OfBody(message),
    Body: message.body,
    ...(Object.keys(Attributes).length > 0 ? { Attributes } : {}),
    ...(withAttributes ? { MessageAttributes, MD5OfMessageAttributes: attributesMd5(MessageAttributes) } : {}),
  };
}
