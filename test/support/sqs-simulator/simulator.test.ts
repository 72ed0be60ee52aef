/**
 * The SQS simulator held to the AWS documentation: each test quotes the rule it pins and cites its page.
 * Everything goes through the real @aws-sdk/client-sqs; time is a manual clock, so a 30-second visibility
 * timeout or the 5-minute deduplication window passes without waiting.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { deliver, manualClock, messageBytes, sqsSimulatorPerSuite, type SimulatedQueue } from './index.js';

const clock = manualClock();
const sqs = sqsSimulatorPerSuite(clock);
const client = () => sqs.client();
let names = 0;
const queue = (suffix = '', maxReceiveCount = 3) => sqs.queue(`sim-${++names}${suffix}`, maxReceiveCount);

const send = (q: SimulatedQueue, body: string, extra: { group?: string; dedup?: string; attributes?: Record<string, MessageAttributeValue> } = {}) =>
  client().send(
    new SendMessageCommand({
      QueueUrl: q.url,
      MessageBody: body,
      ...(extra.group ? { MessageGroupId: extra.group } : {}),
      ...(extra.dedup ? { MessageDeduplicationId: extra.dedup } : {}),
      ...(extra.attributes ? { MessageAttributes: extra.attributes } : {}),
    }),
  );
const receive = async (q: SimulatedQueue, max = 10, visibilityTimeout?: number) =>
  (await client().send(new ReceiveMessageCommand({ QueueUrl: q.url, MaxNumberOfMessages: max, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'], ...(visibilityTimeout === undefined ? {} : { VisibilityTimeout: visibilityTimeout }) }))).Messages ?? [];
const bodies = (messages: Array<{ Body?: string }>) => messages.map((m) => m.Body);
const SECOND = 1000;

describe('SQS simulator: visibility timeout and receive count', () => {
  // "When a consumer receives a message ... it remains in the queue. To prevent other consumers from processing
  // the message again, Amazon SQS sets a visibility timeout ... The default visibility timeout for a message is
  // 30 seconds." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
  it('hides a received message for the queue\'s 30 s, then gives it again with ApproximateReceiveCount 2 and a new receipt handle', async () => {
    const q = queue();
    await send(q, 'one');
    const [first] = await receive(q);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await receive(q)).toEqual([]);
    clock.advance(30 * SECOND - 1);
    expect(await receive(q)).toEqual([]);
    clock.advance(1);
    const [second] = await receive(q);
    expect(second?.MessageId).toBe(first?.MessageId);
    expect(second?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(second?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
  });

  // "VisibilityTimeout: The duration (in seconds) that the received messages are hidden from subsequent retrieve
  // requests after being retrieved by a ReceiveMessage request." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
  it('takes ReceiveMessage\'s own VisibilityTimeout over the queue\'s', async () => {
    const q = queue();
    await send(q, 'one');
    await receive(q, 10, 2);
    clock.advance(2 * SECOND);
    expect(bodies(await receive(q))).toEqual(['one']);
  });

  // "MaxNumberOfMessages: The maximum number of messages to return. Amazon SQS never returns more messages than
  // this value ... Valid values: 1 to 10." (same page)
  it('returns at most MaxNumberOfMessages, and refuses 11', async () => {
    const q = queue();
    for (const body of ['a', 'b', 'c']) await send(q, body);
    expect(bodies(await receive(q, 2))).toEqual(['a', 'b']);
    await expect(receive(q, 11)).rejects.toMatchObject({ name: 'InvalidParameterValue' });
  });
});

describe('SQS simulator: DeleteMessage(Batch) and ChangeMessageVisibility', () => {
  // "If you receive the same message more than once, you will get a different ReceiptHandle each time. When you
  // want to delete a message using the DeleteMessage action, you must use the ReceiptHandle from the most recent
  // time you received the message. If you use an old ReceiptHandle, the request will succeed, but the message
  // might not be deleted." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
  it('deletes by the latest receipt handle; an older one succeeds and deletes nothing', async () => {
    const q = queue();
    await send(q, 'one');
    const [first] = await receive(q);
    clock.advance(30 * SECOND);
    const [second] = await receive(q);
    await client().send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: first?.ReceiptHandle }));
    expect(q.messages).toHaveLength(1);
    await client().send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: second?.ReceiptHandle }));
    expect(q.messages).toEqual([]);
  });

  // "Amazon SQS can delete a message from a queue even if a visibility timeout setting causes the message to be
  // locked by another consumer." (same page) And DeleteMessageBatch: "The result of the action on each message is
  // reported individually in the response." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessageBatch.html
  it('DeleteMessageBatch answers each entry: a receipt handle that is none fails alone (ReceiptHandleIsInvalid)', async () => {
    const q = queue();
    await send(q, 'one');
    const [message] = await receive(q);
    const answer = await client().send(new DeleteMessageBatchCommand({ QueueUrl: q.url, Entries: [{ Id: 'ok', ReceiptHandle: message?.ReceiptHandle }, { Id: 'bad', ReceiptHandle: 'not-a-handle' }] }));
    expect(answer.Successful?.map((entry) => entry.Id)).toEqual(['ok']);
    expect(answer.Failed).toEqual([expect.objectContaining({ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true })]);
    expect(q.messages).toEqual([]);
  });

  // "if the default timeout for a queue is 60 seconds, 15 seconds have elapsed since you received the message, and
  // you send a ChangeMessageVisibility call with VisibilityTimeout set to 10 seconds, the 10 seconds begin to count
  // from the time that you make the ChangeMessageVisibility call." ... "MessageNotInflight: The specified message
  // isn't in flight." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
  it('ChangeMessageVisibility counts from the call; 0 makes the message visible at once; a message not in flight is refused', async () => {
    const q = queue();
    await send(q, 'one');
    const [message] = await receive(q);
    clock.advance(15 * SECOND);
    await client().send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: message?.ReceiptHandle, VisibilityTimeout: 10 }));
    clock.advance(10 * SECOND - 1);
    expect(await receive(q)).toEqual([]);
    clock.advance(1);
    const [again] = await receive(q);
    await client().send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: again?.ReceiptHandle, VisibilityTimeout: 0 }));
    const [third] = await receive(q, 10, 0);
    expect(third?.Attributes?.ApproximateReceiveCount).toBe('3');
    await expect(client().send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: third?.ReceiptHandle, VisibilityTimeout: 5 }))).rejects.toMatchObject({
      name: 'MessageNotInflight',
    });
  });
});

describe('SQS simulator: redrive to the dead-letter queue', () => {
  // "maxReceiveCount – The number of times a consumer can receive a message from a source queue before it is moved
  // to a dead-letter queue." ... "When the ReceiveCount for a message exceeds the maxReceiveCount for a queue,
  // Amazon SQS moves the message to a dead-letter queue (with its original message ID)."
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
  it('moves a message received maxReceiveCount times to the DLQ at the next receive, with its id, body and attributes', async () => {
    const q = queue('', 2);
    const sent = await send(q, 'poison', { attributes: { kind: { DataType: 'String', StringValue: 'bad' } } });
    for (let receiveCount = 1; receiveCount <= 2; receiveCount += 1) {
      expect((await receive(q))[0]?.Attributes?.ApproximateReceiveCount).toBe(String(receiveCount));
      clock.advance(30 * SECOND);
    }
    expect(await receive(q)).toEqual([]);
    expect(q.messages).toEqual([]);
    const [dead] = await receive(q.deadLetter as SimulatedQueue);
    expect(dead).toMatchObject({ MessageId: sent.MessageId, Body: 'poison', MessageAttributes: { kind: { DataType: 'String', StringValue: 'bad' } } });
  });

  it('a message deleted before its maxReceiveCount-th failure never reaches the DLQ', async () => {
    const q = queue('', 2);
    await send(q, 'late success');
    await receive(q);
    clock.advance(30 * SECOND);
    const [second] = await receive(q);
    await client().send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: second?.ReceiptHandle }));
    clock.advance(30 * SECOND);
    expect(await receive(q)).toEqual([]);
    expect(q.deadLetter?.messages).toEqual([]);
  });
});

describe('SQS simulator: FIFO', () => {
  // "If multiple messages with the same deduplication ID are sent within a 5 minute deduplication interval, they are
  // treated as duplicates, and only one copy is delivered. ... Amazon SQS continues tracking the deduplication ID
  // even after the message has been received and deleted." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html
  it('accepts a repeat of a deduplication id within 5 minutes without delivering it, even after the first was deleted; after 5 minutes it is new', async () => {
    const q = queue('.fifo');
    const first = await send(q, 'first', { group: 'g', dedup: 'd1' });
    const [received] = await receive(q);
    await client().send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: received?.ReceiptHandle }));
    clock.advance(5 * 60 * SECOND - 1);
    const repeat = await send(q, 'repeat', { group: 'g', dedup: 'd1' });
    expect(repeat.MessageId).toBe(first.MessageId);
    expect(await receive(q)).toEqual([]);
    clock.advance(1);
    await send(q, 'new again', { group: 'g', dedup: 'd1' });
    expect(bodies(await receive(q))).toEqual(['new again']);
  });

  // "Messages within the same message group are always processed one at a time, in strict order, ensuring that no
  // two messages from the same group are processed simultaneously." (same page) "When you receive messages from a
  // FIFO queue with multiple message group IDs ... messages with the same message group ID are returned in order."
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
  it('keeps each group\'s order; a group with a message in flight gives nothing more until it is deleted or times out', async () => {
    const q = queue('.fifo');
    for (const [group, body] of [['a', 'a1'], ['b', 'b1'], ['a', 'a2'], ['b', 'b2']]) await send(q, body as string, { group, dedup: body });
    const [a1] = await receive(q, 1);
    expect(a1?.Body).toBe('a1');
    expect(a1?.Attributes).toMatchObject({ MessageGroupId: 'a', MessageDeduplicationId: 'a1', SequenceNumber: expect.stringMatching(/^\d{20}$/) });
    expect(bodies(await receive(q))).toEqual(['b1', 'b2']);
    expect(await receive(q)).toEqual([]);
    // a1 fails (not deleted): after its timeout it comes back before a2, never after it.
    clock.advance(30 * SECOND);
    expect(bodies(await receive(q))).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  // "MessageGroupId ... is required for FIFO queues." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
  it('refuses a message with no group id, or with no deduplication id on a queue without content-based deduplication', async () => {
    const q = queue('.fifo');
    await expect(send(q, 'x', { dedup: 'd' })).rejects.toMatchObject({ name: 'MissingParameter' });
    await expect(send(q, 'x', { group: 'g' })).rejects.toMatchObject({ name: 'InvalidParameterValue' });
  });
});

describe('SQS simulator: SendMessageBatch and the size limit', () => {
  // "The result of sending each message is reported individually in the response. Because the batch request can
  // result in a combination of successful and unsuccessful actions, you should check for batch errors even when
  // the call returns an HTTP status code of 200." https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
  it('fails the entries `refuse` names (SenderFault false) and sends the others, in one 200', async () => {
    const q = queue();
    sqs.refuse = (entry) => entry.MessageBody === 'refused';
    try {
      const answer = await client().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: ['a', 'refused', 'b'].map((body, index) => ({ Id: `e${index}`, MessageBody: body })) }));
      expect(answer.Successful?.map((entry) => entry.Id)).toEqual(['e0', 'e2']);
      expect(answer.Failed).toEqual([expect.objectContaining({ Id: 'e1', SenderFault: false, Code: 'InternalError' })]);
      expect(q.messages.map((m) => m.body)).toEqual(['a', 'b']);
    } finally {
      sqs.refuse = () => false;
    }
  });

  it('refuses a batch of 11 entries, and two entries with one Id, as a whole', async () => {
    const q = queue();
    const entries = (count: number, id = (index: number) => `e${index}`) => Array.from({ length: count }, (_, index) => ({ Id: id(index), MessageBody: 'x' }));
    await expect(client().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: entries(11) }))).rejects.toThrow(/Maximum number of entries/);
    await expect(client().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: entries(2, () => 'same') }))).rejects.toThrow(/same Id/);
    expect(q.messages).toEqual([]);
  });

  // "Name, type, value and the message body must not be empty or null. All parts of the message attribute,
  // including Name, Type, and Value, are part of the message size restriction (256 KiB or 262,144 bytes)."
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_MessageAttributeValue.html
  it('counts the body and each attribute\'s name, type and value in UTF-8 bytes: exactly 262 144 is taken, one more refused', async () => {
    const q = queue();
    // name "ключ" 8 bytes, type "String" 6, value "é" 2: 16 bytes of attribute.
    const attributes = { ключ: { DataType: 'String', StringValue: 'é' } };
    expect(messageBytes({ MessageBody: 'ab', MessageAttributes: attributes })).toBe(18);
    await send(q, 'x'.repeat(262_144 - 16), { attributes });
    await expect(send(q, 'x'.repeat(262_144 - 15), { attributes })).rejects.toMatchObject({ name: 'InvalidParameterValue', message: expect.stringMatching(/shorter than 262144/) });
    await expect(send(q, 'x', { attributes: { empty: { DataType: 'String', StringValue: '' } } })).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    expect(q.messages).toHaveLength(1);
  });

  // "The maximum allowed individual message size and the maximum total payload size (the sum of the individual
  // lengths of all of the batched messages) are both 256 KiB (262,144 bytes)." (the SendMessageBatch page)
  it('refuses a batch whose messages, attributes counted, add up to more than 262 144 bytes', async () => {
    const q = queue();
    const attributes = { k: { DataType: 'String', StringValue: 'v' } }; // 8 bytes each
    const entry = (id: string, size: number) => ({ Id: id, MessageBody: 'x'.repeat(size), MessageAttributes: attributes });
    await client().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [entry('a', 131_072 - 8), entry('b', 131_072 - 8)] }));
    await expect(client().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [entry('a', 131_072 - 8), entry('b', 131_072 - 7)] }))).rejects.toThrow(/Batch requests cannot be longer than 262144 bytes/);
    expect(q.messages).toHaveLength(2);
  });

  // "ApproximateNumberOfMessages – Returns the approximate number of messages available for retrieval from the
  // queue. ApproximateNumberOfMessagesNotVisible – Returns the approximate number of messages that are in flight."
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html
  it('GetQueueAttributes counts the visible and the in-flight messages', async () => {
    const q = queue();
    for (const body of ['a', 'b', 'c']) await send(q, body);
    await receive(q, 1);
    const { Attributes } = await client().send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['All'] }));
    expect(Attributes).toMatchObject({ ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '1' });
  });
});

describe("SQS simulator: Lambda's event source mapping (deliver)", () => {
  // "Lambda treats a batch as a complete success if your function returns ... An empty batchItemFailures list ...
  // Lambda treats a batch as a complete failure if your function returns ... An empty string itemIdentifier ... An
  // itemIdentifier value with a message ID that doesn't exist." https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
  it('deletes the records not reported failed; a thrown error or an unknown itemIdentifier fails the whole batch', async () => {
    const q = queue();
    for (const body of ['a', 'b', 'c']) await send(q, body);
    const first = await deliver(q, async (event) => ({ batchItemFailures: [{ itemIdentifier: event.Records[1]?.messageId as string }] }));
    expect(first.messages.map((record) => record.body)).toEqual(['a', 'b', 'c']);
    expect(q.messages.map((m) => m.body)).toEqual(['b']);
    clock.advance(30 * SECOND);
    const unknown = await deliver(q, async () => ({ batchItemFailures: [{ itemIdentifier: 'no such id' }] }));
    expect(unknown.failed).toHaveLength(1);
    clock.advance(30 * SECOND);
    const thrown = await deliver(q, async () => {
      throw new Error('crashed');
    });
    expect(thrown.messages[0]?.attributes.ApproximateReceiveCount).toBe('3');
    expect(q.messages.map((m) => m.body)).toEqual(['b']);
  });
});
