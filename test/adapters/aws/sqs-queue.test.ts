/**
 * The receiver side: `createWebhooks({ inbox: sqsQueue(...), consume: false })` behind `lambdaHandler`, sending
 * through the real @aws-sdk/client-sqs. There is no SQS to run here: the SDK talks to the SQS simulator
 * (test/support/sqs-simulator/), which answers SQS's JSON protocol; the SDK checks the MD5 of each body it
 * answers, so a body changed on the way fails the send.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { MESSAGE_ATTRIBUTES, sqsQueue, type SqsQueueOptions } from '../../../adapters/aws/index.js';
import { lambdaHandler } from '../../../adapters/lambda/index.js';
import { createWebhooks, type Inbox, type ParsedWebhook, type WebhookError } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, lambdaContext, restApiEvent, type EventInput } from '../lambda-events.js';
import { AUTH, PASSWORD, USER, fixture } from '../status-table.js';
import { sqsSimulatorPerSuite, type SimulatedQueue as Queue } from '../../support/sqs-simulator/index.js';

const sqs = sqsSimulatorPerSuite();

const headers = { 'content-type': 'application/json', authorization: AUTH };
const post = (body: string): EventInput => ({ method: 'POST', headers, body });
let names = 0;
let ids = 0;
/** A message_sent event of its own (createTestEvent's are all one message: one idempotency key). */
const message = (text = 'hello') => createTestEvent('message_sent', { data: { message: { id: String(++ids), data: { text } } } });

function receiver(queue: Queue, options: Partial<SqsQueueOptions> = {}, maxBodyBytes?: number) {
  const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client(), ...options });
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {}, inbox, consume: false, ...(maxBodyBytes ? { maxBodyBytes } : {}) });
  const errors: WebhookError[] = [];
  webhooks.onError((error) => void errors.push(error));
  return { inbox, webhooks, errors, handler: lambdaHandler(webhooks) };
}

const attribute = (queue: Queue, index: number, name: string) => queue.messages[index]?.attributes[name]?.StringValue;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('sqsQueue: the receiver answers once SQS has the event', () => {
  it('sends the exact raw body, with key, trigger and receipt time as message attributes, then answers 200', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler, errors } = receiver(queue);
    // Odd spacing and key order: the consumer must get these bytes, not the event serialized again.
    const raw = `{ "data" : ${JSON.stringify(createTestEvent('message_sent').data)},\n "trigger":"message_sent", "appId": "app-1", "webhook": "w1" }`;
    const before = Date.now();
    const result = await handler(httpApiEvent(post(raw)), lambdaContext());
    expect(result.statusCode).toBe(200);
    expect(queue.messages).toHaveLength(1);
    expect(queue.messages[0]?.body).toBe(raw);
    const key = attribute(queue, 0, MESSAGE_ATTRIBUTES.key) as string;
    expect(key).toMatch(/message_sent/);
    expect(attribute(queue, 0, MESSAGE_ATTRIBUTES.trigger)).toBe('message_sent');
    const receivedAt = Number(attribute(queue, 0, MESSAGE_ATTRIBUTES.receivedAt));
    expect(receivedAt).toBeGreaterThanOrEqual(before);
    expect(queue.messages[0]?.attributes[MESSAGE_ATTRIBUTES.receivedAt]?.DataType).toBe('Number');
    // A standard queue: no FIFO ids; the platform's retries each land, the consumer's idempotency drops them.
    expect(queue.messages[0]?.groupId).toBeUndefined();
    expect(queue.messages[0]?.deduplicationId).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('FIFO: the deduplication id is the key hashed, so SQS drops the platform retries; the group is the conversation', async () => {
    const queue = sqs.queue(`events-${++names}.fifo`);
    const { handler } = receiver(queue);
    const body = fixture('message_sent');
    // The first delivery and the platform's retries 10 s and 30 s later, through three API kinds.
    for (const event of [restApiEvent(post(body)), httpApiEvent(post(body)), albEvent(post(body))]) {
      expect((await handler(event, lambdaContext())).statusCode).toBe(200);
    }
    expect(sqs.calls.filter((call) => call.input.QueueUrl === queue.url)).toHaveLength(3);
    expect(queue.messages).toHaveLength(1);
    const key = attribute(queue, 0, MESSAGE_ATTRIBUTES.key) as string;
    expect(queue.messages[0]?.deduplicationId).toBe(sha256(key));
    expect(queue.messages[0]?.deduplicationId).toHaveLength(64);
    expect(queue.messages[0]?.groupId).toBe(JSON.parse(body).data.message.conversationId);
  });

  it('FIFO groups: a group\'s conversation id, else the trigger; groupId() decides when given, hashed if SQS would refuse it', async () => {
    const queue = sqs.queue(`events-${++names}.fifo`);
    const { handler } = receiver(queue);
    for (const trigger of ['group_created', 'call_initiated', 'user_blocked'] as const) {
      expect((await handler(functionUrlEvent(post(JSON.stringify(createTestEvent(trigger)))), lambdaContext())).statusCode).toBe(200);
    }
    const events = queue.messages.map((message) => JSON.parse(message.body));
    expect(queue.messages.map((message) => message.groupId)).toEqual([
      events[0].data.group.conversationId,
      events[1].data.call.conversationId,
      'user_blocked',
    ]);

    const custom = sqs.queue(`events-${++names}.fifo`);
    const byApp = receiver(custom, { groupId: (event) => `app ${(event as { appId?: string }).appId} ✓` });
    expect((await byApp.handler(httpApiEvent(post(fixture('message_sent'))), lambdaContext())).statusCode).toBe(200);
    const appId = JSON.parse(fixture('message_sent')).appId;
    expect(custom.messages[0]?.groupId).toBe(sha256(`app ${appId} ✓`));
  });

  it('puts of one turn go together: 25 deliveries at once are 3 SendMessageBatch calls (10, 10, 5), each answered 200', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler } = receiver(queue);
    const bodies = Array.from({ length: 25 }, () => JSON.stringify(message()));
    const results = await Promise.all(bodies.map((body) => handler(httpApiEvent(post(body)), lambdaContext())));
    expect(results.map((result) => result.statusCode)).toEqual(bodies.map(() => 200));
    const calls = sqs.calls.filter((call) => call.input.QueueUrl === queue.url);
    expect(calls.map((call) => [call.target, call.input.Entries?.length])).toEqual([
      ['SendMessageBatch', 10],
      ['SendMessageBatch', 10],
      ['SendMessageBatch', 5],
    ]);
    expect(queue.messages.map((message) => message.body).sort()).toEqual([...bodies].sort());
  });

  it('a batch holds no more bytes than SQS takes: three 100 KiB events at once are two calls (2, 1)', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler } = receiver(queue, {}, 1024 * 1024);
    const bodies = Array.from({ length: 3 }, () => JSON.stringify(message('x'.repeat(100 * 1024))));
    const results = await Promise.all(bodies.map((body) => handler(httpApiEvent(post(body)), lambdaContext())));
    expect(results.map((result) => result.statusCode)).toEqual([200, 200, 200]);
    expect(sqs.calls.filter((call) => call.input.QueueUrl === queue.url).map((call) => call.input.Entries?.length)).toEqual([2, 1]);
    expect(queue.messages).toHaveLength(3);
  });

  it('an entry SQS refuses within a batch is answered 503; the others 200', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler, errors } = receiver(queue);
    sqs.refuse = (entry) => entry.MessageBody.includes('refuse me');
    try {
      const bodies = [message(), message('refuse me'), message()].map((event) => JSON.stringify(event));
      const results = await Promise.all(bodies.map((body) => handler(httpApiEvent(post(body)), lambdaContext())));
      expect(results.map((result) => result.statusCode)).toEqual([200, 503, 200]);
      expect(results[1]?.headers?.['retry-after']).toBe('5');
      expect(queue.messages).toHaveLength(2);
      expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['inbox_failed', bodies[1]]]);
    } finally {
      sqs.refuse = () => false;
    }
  });

  it('SQS failing (HTTP 500, after the SDK retried) is answered 503 + Retry-After, reported with the raw body', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler, errors } = receiver(queue);
    sqs.behaviour = 'fail';
    try {
      const result = await handler(httpApiEvent(post(fixture('message_sent'))), lambdaContext());
      expect(result.statusCode).toBe(503);
      expect(result.headers?.['retry-after']).toBe('5');
    } finally {
      sqs.behaviour = 'answer';
    }
    expect(sqs.calls.filter((call) => call.input.QueueUrl === queue.url)).toHaveLength(2);
    expect(queue.messages).toEqual([]);
    expect(errors.map((error) => [error.code, error.rawBody])).toEqual([['inbox_failed', fixture('message_sent')]]);
  });

  it('SQS not answering, 800 ms left: 503 + Retry-After before 850 ms (not the 2 s commit timeout)', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler, errors } = receiver(queue);
    sqs.behaviour = 'hang';
    let ms: number;
    let status: number;
    try {
      const started = performance.now();
      status = (await handler(restApiEvent(post(fixture('message_sent'))), lambdaContext(800))).statusCode;
      ms = performance.now() - started;
    } finally {
      sqs.behaviour = 'answer';
    }
    expect(status).toBe(503);
    expect(ms).toBeLessThan(850);
    expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
  });

  it('a body above the queue limit is refused (413) with a clear error and its raw body, nothing sent', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler, errors } = receiver(queue, {}, 1024 * 1024);
    const event = createTestEvent('message_sent');
    (event.data.message as { data: { text: string } }).data.text = 'x'.repeat(300 * 1024);
    const body = JSON.stringify(event);
    const result = await handler(httpApiEvent(post(body)), lambdaContext());
    expect(result.statusCode).toBe(413);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.code).toBe('payload_too_large');
    expect(errors[0]?.message).toMatch(/above the queue's limit of 262144 bytes/);
    expect(errors[0]?.rawBody).toBe(body);
    expect(sqs.calls.filter((call) => call.input.QueueUrl === queue.url)).toEqual([]);
  });

  it('a body with characters SQS refuses travels base64-encoded, marked by an attribute', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const { handler } = receiver(queue);
    const event = createTestEvent('message_sent');
    (event.data.message as { data: { text: string } }).data.text = 'not a character: \uFFFF';
    const body = JSON.stringify(event);
    expect((await handler(httpApiEvent(post(body)), lambdaContext())).statusCode).toBe(200);
    expect(attribute(queue, 0, MESSAGE_ATTRIBUTES.encoding)).toBe('base64');
    expect(Buffer.from(queue.messages[0]?.body as string, 'base64').toString('utf8')).toBe(body);
  });

  it('a key holding characters SQS refuses travels base64-encoded, marked by an attribute, the same for every delivery', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client() });
    const webhooks = createWebhooks({ auth: false, logger: {}, inbox, consume: false, idempotencyKeys: { message_sent: (event) => String((event.data.message.data as { text: string }).text) } });
    const handler = lambdaHandler(webhooks);
    const body = JSON.stringify(message('odd \uFFFF key'));
    for (let delivery = 0; delivery < 2; delivery += 1) {
      expect((await handler(httpApiEvent({ method: 'POST', headers: { 'content-type': 'application/json' }, body }), lambdaContext())).statusCode).toBe(200);
    }
    const keys = queue.messages.map((m) => m.attributes[MESSAGE_ATTRIBUTES.key]?.StringValue as string);
    expect(Buffer.from(keys[0] as string, 'base64').toString('utf8')).toMatch(/:message_sent:odd \uFFFF key$/);
    expect(attribute(queue, 0, MESSAGE_ATTRIBUTES.keyEncoding)).toBe('base64');
    expect(keys[1]).toBe(keys[0]);
    // A key SQS takes goes as it is, unmarked.
    expect((await handler(httpApiEvent(post(JSON.stringify(message('plain')))), lambdaContext())).statusCode).toBe(200);
    expect(attribute(queue, 2, MESSAGE_ATTRIBUTES.key)).toMatch(/:message_sent:plain$/);
    expect(attribute(queue, 2, MESSAGE_ATTRIBUTES.keyEncoding)).toBeUndefined();
  });

  it('passes the trace context of the entry as a traceparent attribute', async () => {
    const queue = sqs.queue(`events-${++names}`);
    const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client() });
    const event = createTestEvent('message_sent');
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const entry = { key: 'k1', trigger: event.trigger, event, rawBody: JSON.stringify(event), receivedAt: Date.now() };
    expect(await inbox.put({ ...entry, traceparent })).toBe('stored');
    expect(await inbox.put({ ...entry, key: 'k2' })).toBe('stored');
    expect(attribute(queue, 0, 'traceparent')).toBe(traceparent);
    expect(queue.messages[1]?.attributes.traceparent).toBeUndefined();
  });

  it('is receive-only: claims are refused, saying to receive with consume: false', async () => {
    const inbox = sqsQueue({ queueUrl: sqs.queue(`events-${++names}`).url, client: sqs.client() });
    await expect(inbox.claim({ leaseMs: 1000, waitMs: 0 })).rejects.toThrow(/consume: false/);
    expect(inbox.durable).toBe(true);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
  });

  it('a receiver left with consume on says so in its log: the queue is consumed by sqsHandler', async () => {
    const logged: string[] = [];
    const inbox = sqsQueue({ queueUrl: sqs.queue(`events-${++names}`).url, client: sqs.client() });
    const webhooks = createWebhooks({ auth: false, inbox, logger: { warn: (fields: { reason?: string }) => void logged.push(String(fields.reason)) } });
    for (let wait = 0; wait < 100 && logged.length === 0; wait += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    await webhooks.close();
    expect(logged[0]).toMatch(/consume: false/);
  });

  it('refuses options that cannot work', () => {
    expect(() => sqsQueue({ queueUrl: 'events' })).toThrow(/queueUrl/);
    expect(() => sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/events', groupId: () => 'g' })).toThrow(/FIFO/);
    expect(() => sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/e.fifo', groupId: 'g' as never })).toThrow(/groupId/);
    expect(() => sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/e', maxMessageBytes: 10 })).toThrow(/maxMessageBytes/);
    expect(() => sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/e', queueURL: 'x' } as never)).toThrow(/queueURL/);
  });

  it('types: an Inbox; groupId gets the parsed event; queueUrl is required', () => {
    expectTypeOf(sqsQueue).returns.toEqualTypeOf<Inbox>();
    expectTypeOf<SqsQueueOptions['groupId']>().toEqualTypeOf<((event: ParsedWebhook) => string) | undefined>();
    // @ts-expect-error queueUrl is required
    expect(() => sqsQueue({})).toThrow(/queueUrl/);
  });
});
