/**
 * The whole Lambda path, as a Lambda user would run it locally: platform deliveries (API Gateway, function URL
 * and ALB events) → the receiver function (`lambdaHandler` over `createWebhooks({ inbox: sqsQueue(...) })`) →
 * the queue → the consumer function (`sqsHandler` with `dynamoIdempotency`) invoked with SQS events built from
 * the messages the receiver sent. Mixed in: SQS failing (503, then the platform's retry), the platform's
 * retries of deliveries already answered 200, a consumer invocation abandoned mid-handler (a crash: nothing
 * answered, the lease in DynamoDB runs out, SQS delivers the batch again), a poison event, FIFO order.
 * SQS is the SQS simulator of test/support/sqs-simulator/ (the real SDK client, but no real SQS: none runs here);
 * DynamoDB is dynalite with the real SDK client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoIdempotency, sqsHandler, sqsQueue } from '../../../adapters/aws/index.js';
import { lambdaHandler, type LambdaHttpEvent } from '../../../adapters/lambda/index.js';
import { createWebhooks, type WebhookError } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, lambdaContext, restApiEvent, type EventInput } from '../lambda-events.js';
import { AUTH, PASSWORD, USER } from '../status-table.js';
import { startDynalite, type Dynamo } from './dynalite.js';
import { deliver, lambdaEvent, SqsSimulator } from '../../support/sqs-simulator/index.js';

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
    const definition = createWebhooks({ auth: false, logger: {} })
      .on('message_sent', async (event) => {
        const { id } = event.data.message;
        if (crash?.id === id) {
          crash.started();
          crash = undefined;
          return new Promise(() => undefined);
        }
        if ((event.data.message.data as { text?: string }).text === 'poison') throw new Error('this event always fails');
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

    // A consumer invocation that dies mid-handler: nothing answered, so SQS sends its whole batch again once
    // the visibility timeout ran out; the key it held in DynamoDB is free once its lease (the invocation's
    // remaining time) ran out; the records it finished are done, and skipped when they come back.
    const first = queue.receive(10);
    const crashed = new Promise<void>((started) => (crash = { id: 'm0', started }));
    void consumer(lambdaEvent(queue, first), lambdaContext(LEASE_MS));
    await crashed;
    await pause(LEASE_MS + 100);
    queue.timeOut();

    // The event source mapping polls until the queue is empty; failed records wait for their visibility timeout.
    for (let poll = 0; poll < 40 && queue.messages.length > 0; poll += 1) {
      const { messages } = await deliver(queue, consumer, 10);
      if (messages.length === 0) queue.timeOut();
    }

    expect(queue.messages).toEqual([]);
    const handledOnce = acknowledged.filter((id) => id !== 'poison');
    expect([...handled].sort()).toEqual([...handledOnce].sort());
    expect(new Set(handled).size).toBe(handled.length);
    // The poison event: three receives, each failure reported with its raw body, then the dead-letter queue.
    expect(queue.deadLetter?.messages.map((message) => JSON.parse(message.body).data.message.id)).toEqual(['poison']);
    const poisonErrors = errors.filter((error) => error.code === 'handler_failed');
    expect(poisonErrors.map((error) => JSON.parse(String(error.rawBody)).data.message.id)).toEqual(['poison', 'poison', 'poison']);
    // Redelivered records already done (the crashed batch's, and a standard queue's repeats) were skipped.
    expect(duplicates.length).toBeGreaterThan(0);
    if (fifo) {
      for (const conversation of CONVERSATIONS) {
        const inConversation = (id: string) => events.find((event) => event.data.message.id === id)?.data.message.conversationId === conversation;
        expect(handled.filter(inConversation)).toEqual(acknowledged.filter(inConversation));
      }
    }
  }, 30_000);
});
