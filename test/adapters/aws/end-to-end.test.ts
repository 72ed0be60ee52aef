/**
 * The whole Lambda path, as a Lambda user would run it locally: platform deliveries (API Gateway, function URL
 * and ALB events) → the receiver function (`lambdaHandler` over `createWebhooks({ inbox: sqsQueue(...) })`) →
 * the queue → the consumer function (`sqsHandler` with `dynamoIdempotency`) invoked with SQS events built from
 * the messages the receiver sent, received from the queue as Lambda's event source mapping does (ReceiveMessage,
 * invoke, DeleteMessageBatch of the records not failed; the failed ones come back after their visibility
 * timeout). Mixed in: SQS failing (503, then the platform's retry), the platform's retries of deliveries
 * already answered 200, a consumer invocation abandoned mid-batch (a crash: nothing answered, the lease in
 * DynamoDB runs out, SQS gives the batch again), an event that fails once, a poison event that the redrive
 * policy moves to the dead-letter queue, FIFO order. SQS is the simulator of test/support/sqs-simulator/
 * (the real SDK client, but no real SQS: none runs here); DynamoDB is dynalite with the real SDK client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoIdempotency, sqsHandler, sqsQueue } from '../../../adapters/aws/index.js';
import { lambdaHandler, type LambdaHttpEvent } from '../../../adapters/lambda/index.js';
import { createWebhooks, type WebhookError } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, lambdaContext, restApiEvent, type EventInput } from '../lambda-events.js';
import { AUTH, PASSWORD, USER } from '../status-table.js';
import { startDynalite, type Dynamo } from './dynalite.js';
import { deliver, receiveEvent, SqsSimulator, type SimulatedQueue } from '../../support/sqs-simulator/index.js';

let sqs: SqsSimulator;
let dynamo: Dynamo;
beforeAll(async () => {
  [sqs, dynamo] = await Promise.all([new SqsSimulator().start(), startDynalite()]);
});
afterAll(() => Promise.all([sqs.stop(), dynamo.stop()]));

const kinds: Array<(input: EventInput) => LambdaHttpEvent> = [restApiEvent, (input) => httpApiEvent(input), functionUrlEvent, (input) => albEvent(input, true)];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CONVERSATIONS = ['alpha', 'beta', 'gamma'];
const LEASE_MS = 1500;
const idOf = (body: string): string => JSON.parse(body).data.message.id;

/**
 * The event source mapping polls until the queue is empty, waiting out the visibility timeout when a poll is
 * empty. Checks on the way what SQS promises: a failed record stays hidden until its timeout, and each receive
 * counts (ApproximateReceiveCount is the number of times this test received the message).
 */
async function drain(queue: SimulatedQueue, consumer: Parameters<typeof deliver>[1], receives: Map<string, number>) {
  let hidden = new Set<string>();
  for (let poll = 0; poll < 60 && queue.messages.length > 0; poll += 1) {
    const { messages, failed } = await deliver(queue, consumer, 10);
    if (messages.length === 0) {
      queue.timeOut();
      hidden = new Set();
      continue;
    }
    for (const record of messages) {
      expect(hidden.has(record.messageId), `${idOf(record.body)} came back before its visibility timeout`).toBe(false);
      receives.set(record.messageId, (receives.get(record.messageId) ?? 0) + 1);
      expect(record.attributes.ApproximateReceiveCount).toBe(String(receives.get(record.messageId)));
    }
    for (const id of failed) hidden.add(id);
  }
}

describe.each(['events.fifo', 'events'])('end to end on AWS Lambda, queue %s', (queueName) => {
  it('every acknowledged event is handled once, in order per conversation on FIFO; none lost; the poison is dead-lettered', async () => {
    const queue = sqs.queue(`${queueName.replace('events', `e2e-${Math.random().toString(36).slice(2, 8)}`)}`, 3);
    const fifo = queue.fifo;
    const tableName = await dynamo.table(`keys-${Math.random().toString(36).slice(2, 10)}`);

    // The receiver function.
    const receiverWebhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {}, inbox: sqsQueue({ queueUrl: queue.url, client: sqs.client() }), consume: false });
    const receiver = lambdaHandler(receiverWebhooks);

    // The consumer function: `handled` is the handlers' side effect, written once they finished.
    const handled: string[] = [];
    const errors: WebhookError[] = [];
    const duplicates: string[] = [];
    let crash: { id: string; started: () => void } | undefined;
    let flaky = 'm4';
    const definition = createWebhooks({ auth: false, logger: {} })
      .on('message_sent', async (event) => {
        const { id } = event.data.message;
        if (crash?.id === id) {
          crash.started();
          crash = undefined;
          return new Promise(() => undefined);
        }
        if ((event.data.message.data as { text?: string }).text === 'poison') throw new Error('this event always fails');
        if (id === flaky) {
          flaky = '';
          throw new Error('this event fails once');
        }
        await pause(1);
        handled.push(id);
      })
      .onError((error) => void errors.push(error))
      .onDuplicate((_event, { key }) => void duplicates.push(key));
    const consumer = sqsHandler(definition, { idempotency: dynamoIdempotency({ tableName, client: dynamo.client }) });

    // The platform delivers 24 events over 3 conversations and a poison one; SQS fails now and then.
    const events = Array.from({ length: 24 }, (_, index) =>
      createTestEvent('message_sent', { data: { message: { id: `m${index}`, conversationId: CONVERSATIONS[index % 3], data: { text: `event ${index}` } } } }),
    );
    events.splice(9, 0, createTestEvent('message_sent', { data: { message: { id: 'poison', conversationId: 'poisoned', data: { text: 'poison' } } } }));
    const acknowledged: string[] = [];
    let retriesOfAcknowledged = 0;
    let answered503 = 0;
    for (const [index, event] of events.entries()) {
      const body = JSON.stringify(event);
      const send = (attempt: number) => receiver(kinds[(index + attempt) % kinds.length]!({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body }), lambdaContext(3000));
      sqs.behaviour = index % 7 === 3 ? 'fail' : 'answer';
      let attempt = 0;
      let status = (await send(attempt)).statusCode;
      sqs.behaviour = 'answer';
      // The platform retries (10 s, then 30 s later) what was not answered 200.
      while (status !== 200 && attempt < 2) {
        answered503 += 1;
        status = (await send(++attempt)).statusCode;
      }
      expect(status).toBe(200);
      acknowledged.push(event.data.message.id);
      // Sometimes the 200 did not reach the platform in time: it sends the delivery again.
      if (index % 5 === 0) {
        expect((await send(++attempt)).statusCode).toBe(200);
        retriesOfAcknowledged += 1;
      }
    }
    expect(answered503).toBeGreaterThan(0);
    // FIFO drops the retries by their deduplication id; a standard queue holds them, the consumer skips them.
    expect(queue.messages).toHaveLength(fifo ? events.length : events.length + retriesOfAcknowledged);

    // A consumer invocation that dies mid-batch: nothing answered, so SQS gives its whole batch again once the
    // visibility timeout ran out; the key it held in DynamoDB is free once its lease (the invocation's remaining
    // time) ran out; the records it finished are done, and skipped when they come back.
    const receives = new Map<string, number>();
    const abandoned = await receiveEvent(queue, 10);
    for (const record of abandoned.Records) receives.set(record.messageId, 1);
    const crashed = new Promise<void>((started) => (crash = { id: 'm0', started }));
    void consumer(abandoned, lambdaContext(LEASE_MS));
    await crashed;
    expect(queue.counts().inFlight).toBe(abandoned.Records.length);
    await pause(LEASE_MS + 100);
    queue.timeOut();

    await drain(queue, consumer, receives);

    expect(queue.messages).toEqual([]);
    const handledOnce = acknowledged.filter((id) => id !== 'poison');
    expect([...handled].sort()).toEqual([...handledOnce].sort());
    expect(new Set(handled).size).toBe(handled.length);
    // The poison event: three receives (attempts 1, 2 and 3), each failure reported with its raw body, then the
    // redrive policy moved it to the dead-letter queue at the next receive, where it is received as it was sent.
    const poisonErrors = errors.filter((error) => error.code === 'handler_failed' && idOf(String(error.rawBody)) === 'poison');
    expect(poisonErrors.map((error) => error.attempt)).toEqual([1, 2, 3]);
    const dead = await receiveEvent(queue.deadLetter as SimulatedQueue, 10);
    expect(dead.Records.map((record) => idOf(record.body))).toEqual(['poison']);
    expect(errors.filter((error) => error.code === 'handler_failed' && idOf(String(error.rawBody)) === 'm4')).toHaveLength(1);
    // Redelivered records already done (the crashed batch's, and a standard queue's repeats) were skipped.
    expect(duplicates.length).toBeGreaterThan(0);
    if (fifo) {
      // FIFO order held through the crash and m4's failure: each conversation handled in the order acknowledged.
      for (const conversation of CONVERSATIONS) {
        const inConversation = (id: string) => events.find((event) => event.data.message.id === id)?.data.message.conversationId === conversation;
        expect(handled.filter(inConversation)).toEqual(acknowledged.filter(inConversation));
      }
    }
  }, 30_000);
});
