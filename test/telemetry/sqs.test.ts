/**
 * Trace context across SQS, with the real SDK: the receiver function (`lambdaHandler` over `sqsQueue`) stores
 * its PRODUCER span's traceparent as a message attribute; the consumer function (`sqsHandler`) runs each
 * record's handlers in a CONSUMER span in a new trace, LINKED to it, as a worker's attempt over an inbox is.
 * SQS is the SQS simulator of ../support/sqs-simulator/ with the real SDK client.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { sqsHandler, sqsQueue } from '../../adapters/aws/index.js';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { createWebhooks } from '../../src/index.js';
import { createTestEvent } from '../../src/testing/index.js';
import { deliver, sqsSimulatorPerSuite } from '../support/sqs-simulator/index.js';
import { httpApiEvent, lambdaContext } from '../adapters/lambda-events.js';
import { sdk } from './sdk.js';

const sqs = sqsSimulatorPerSuite();

const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);

it('links the consumer span of each SQS record to the producer span the receiver stored with it', async () => {
  const queue = sqs.queue(`otel-${Math.random().toString(36).slice(2, 8)}`, 3);
  const sending = sdk();
  const consuming = sdk();
  const receiver = createWebhooks({ auth: false, logger: {}, inbox: sqsQueue({ queueUrl: queue.url, client: sqs.client() }), consume: false, telemetry: sending.telemetry });
  const handled: string[] = [];
  const consumerWebhooks = createWebhooks({ auth: false, logger: {}, telemetry: consuming.telemetry }).on('message_sent', (event) => {
    handled.push(event.data.message.id);
    if (event.data.message.id === 'fails') throw new Error('this one fails');
  });
  try {
    const handler = lambdaHandler(receiver);
    for (const id of ['m1', 'fails']) {
      const body = JSON.stringify(createTestEvent('message_sent', { data: { message: { id } } }));
      const answer = await handler(httpApiEvent({ method: 'POST', headers: { 'content-type': 'application/json' }, body }), lambdaContext(3000));
      expect(answer.statusCode).toBe(200);
    }
    const { messages, failed } = await deliver(queue, sqsHandler(consumerWebhooks));
    expect(messages).toHaveLength(2);
    expect(failed).toHaveLength(1);

    const producers = named(sending.spans(), 'send sqs');
    const consumers = named(consuming.spans(), 'process sqs');
    expect(producers).toHaveLength(2);
    expect(consumers).toHaveLength(2);
    for (const consumer of consumers) {
      expect(consumer.kind).toBe(SpanKind.CONSUMER);
      expect(consumer.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.destination.name': 'sqs', 'chat_webhooks.attempt': 1 });
      expect(consumer.links).toHaveLength(1);
      const producer = producers.find((span) => span.spanContext().spanId === consumer.links[0]?.context.spanId);
      expect(producer, 'each consumer span links to one of the producer spans').toBeDefined();
      expect(consumer.links[0]?.context.traceId).toBe(producer?.spanContext().traceId);
      expect(consumer.spanContext().traceId).not.toBe(producer?.spanContext().traceId);
    }
    expect(handled.sort()).toEqual(['fails', 'm1']);
    // The failed record's span says so (SQS delivers it again).
    const statuses = consumers.map((span) => span.status.code).sort();
    expect(statuses).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR].sort());
  } finally {
    await Promise.all([receiver.close(), consumerWebhooks.close(), sending.shutdown(), consuming.shutdown()]);
  }
});

it('names the queue "queue" and starts a span with no link for an event received without a traceparent', async () => {
  const otel = sdk();
  const webhooks = createWebhooks({ auth: false, logger: {}, telemetry: otel.telemetry }).on('message_sent', () => undefined);
  try {
    const outcome = await webhooks.receive(createTestEvent('message_sent'), { attempt: 2 });
    expect(outcome.ok).toBe(true);
    const [consumer] = named(otel.spans(), 'process queue');
    expect(consumer?.kind).toBe(SpanKind.CONSUMER);
    expect(consumer?.links).toEqual([]);
    expect(consumer?.attributes).toMatchObject({ 'messaging.destination.name': 'queue', 'chat_webhooks.attempt': 2 });
  } finally {
    await Promise.all([webhooks.close(), otel.shutdown()]);
  }
});
