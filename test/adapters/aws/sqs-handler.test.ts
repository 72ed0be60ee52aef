/**
 * The consumer side: `sqsHandler(webhooks, options)` invoked with Lambda's SQS events (real record shapes, as
 * the event source mapping builds them) for messages the receiver's `sqsQueue` sent through the real SQS client
 * to the SQS simulator (test/support/sqs-simulator/: there is no SQS to run here).
 */
import type { SQSBatchResponse, SQSEvent, SQSHandler } from 'aws-lambda';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { memoryIdempotency, sqsHandler, sqsQueue, type IdempotencyStore, type SqsHandlerOptions } from '../../../adapters/aws/index.js';
import { createWebhooks, idempotencyKey, type HandlerContext, type ParsedWebhook, type WebhookError } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { deliver, lambdaEvent, sqsSimulatorPerSuite, type SimulatedQueue as Queue } from '../../support/sqs-simulator/index.js';

const sqs = sqsSimulatorPerSuite();

let names = 0;
let ids = 0;
const message = (text = 'hello', conversationId = 'superhero1_user_superhero2') =>
  createTestEvent('message_sent', { data: { message: { id: String(++ids), conversationId, data: { text } } } });

/** Puts each event into the queue through sqsQueue (the receiver's own path) with its own key. */
async function enqueue(queue: Queue, events: ParsedWebhook[]): Promise<string[]> {
  const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client() });
  const keys = events.map((event) => idempotencyKey(event));
  await Promise.all(
    events.map((event, index) => inbox.put({ key: keys[index] as string, trigger: event.trigger, event, rawBody: JSON.stringify(event), receivedAt: 1_700_000_000_000 + index })),
  );
  return keys;
}

/** A consumer and what it saw: each handler run as [text, context], onError's codes, onDuplicate's keys. */
function consumer(options: SqsHandlerOptions = {}, fail: (text: string, context: HandlerContext) => boolean | 'hang' = () => false) {
  const webhooks = createWebhooks({ auth: false, logger: {} });
  const runs: Array<[string, HandlerContext]> = [];
  const errors: WebhookError[] = [];
  const duplicates: string[] = [];
  webhooks.on('message_sent', async (event, context) => {
    const text = (event.data.message.data as { text: string }).text;
    runs.push([text, { ...context }]);
    const verdict = fail(text, context);
    if (verdict === 'hang') await new Promise(() => undefined);
    if (verdict) throw new Error(`handler failed on ${text}`);
  });
  webhooks.onError((error) => void errors.push(error));
  webhooks.onDuplicate((_event, { key }) => void duplicates.push(key));
  return { handler: sqsHandler(webhooks, options), runs, errors, duplicates };
}

describe('sqsHandler: runs the handlers of each record, answers the failed ones', () => {
  it('runs on/onAny handlers with { key, attempt, receivedAt } from the message; nothing failed', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const keys = await enqueue(queue, [message('a'), message('b')]);
    const { handler, runs, errors } = consumer();
    const { failed } = await deliver(queue, handler);
    expect(failed).toEqual([]);
    expect(runs).toEqual([
      ['a', { key: keys[0], attempt: 1, receivedAt: 1_700_000_000_000 }],
      ['b', { key: keys[1], attempt: 1, receivedAt: 1_700_000_000_001 }],
    ]);
    expect(errors).toEqual([]);
    expect(queue.messages).toEqual([]);
  });

  it('answers exactly the records whose handlers failed; attempt counts SQS receives', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, ['ok 1', 'bad 1', 'ok 2', 'bad 2', 'ok 3'].map((text) => message(text)));
    const { handler, runs, errors } = consumer({}, (text, { attempt }) => text.startsWith('bad') && attempt === 1);
    const first = await deliver(queue, handler);
    const byText = new Map(first.messages.map((m) => [JSON.parse(m.body).data.message.data.text, m.messageId]));
    expect(first.failed.sort()).toEqual([byText.get('bad 1'), byText.get('bad 2')].sort());
    expect(errors.map((error) => [error.code, error.key !== undefined, JSON.parse(String(error.rawBody)).data.message.data.text])).toEqual([
      ['handler_failed', true, 'bad 1'],
      ['handler_failed', true, 'bad 2'],
    ]);
    queue.timeOut();
    const second = await deliver(queue, handler);
    expect(second.failed).toEqual([]);
    expect(runs.filter(([text]) => text.startsWith('bad')).map(([text, context]) => [text, context.attempt])).toEqual([
      ['bad 1', 1],
      ['bad 2', 1],
      ['bad 1', 2],
      ['bad 2', 2],
    ]);
    expect(queue.messages).toEqual([]);
  });

  it('FIFO: a group runs in order; after its first failure the rest of that group fails too, other groups go on', async () => {
    const queue = sqs.queue(`consume-${++names}.fifo`);
    await enqueue(queue, [message('a1', 'A'), message('b1', 'B'), message('a2', 'A'), message('b2', 'B'), message('a3', 'A')]);
    let failA2 = true;
    const { handler, runs } = consumer({}, (text) => text === 'a2' && failA2);
    const first = await deliver(queue, handler);
    const idOf = new Map(first.messages.map((m) => [JSON.parse(m.body).data.message.data.text, m.messageId]));
    expect(first.failed).toEqual([idOf.get('a2'), idOf.get('a3')]);
    expect(runs.map(([text]) => text).filter((text) => text.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(runs.map(([text]) => text).filter((text) => text.startsWith('b'))).toEqual(['b1', 'b2']);
    failA2 = false;
    queue.timeOut();
    const second = await deliver(queue, handler);
    expect(second.messages.map((m) => JSON.parse(m.body).data.message.data.text)).toEqual(['a2', 'a3']);
    expect(second.failed).toEqual([]);
    expect(runs.map(([text]) => text).filter((text) => text.startsWith('a'))).toEqual(['a1', 'a2', 'a2', 'a3']);
  });

  it('records that are no webhook go to onError with their body and back to SQS, then to the dead-letter queue', async () => {
    const queue = sqs.queue(`consume-${++names}`, 3);
    const good = message('good');
    await enqueue(queue, [good]);
    queue.send({ Id: 'x', MessageBody: 'not json at all' });
    const invalid = JSON.stringify({ trigger: 'message_sent', appId: 'app', data: { message: { id: 5 } } });
    queue.send({ Id: 'y', MessageBody: invalid });
    const { handler, runs, errors } = consumer();
    for (let receive = 1; receive <= 3; receive += 1) {
      const { failed } = await deliver(queue, handler);
      expect(failed).toHaveLength(2);
      queue.timeOut();
    }
    // SQS moves a message at the receive after its maxReceiveCount-th, not when its timeout ends: that poll is empty.
    expect((await deliver(queue, handler)).messages).toEqual([]);
    expect(runs.map(([text]) => text)).toEqual(['good']);
    expect(queue.messages).toEqual([]);
    expect(queue.deadLetter?.messages.map((m) => m.body).sort()).toEqual([invalid, 'not json at all'].sort());
    expect(errors.map((error) => [error.code, error.rawBody, error.attempt])).toEqual(
      expect.arrayContaining([
        ['invalid_json', 'not json at all', 1],
        ['invalid_payload', invalid, 1],
        ['invalid_json', 'not json at all', 3],
        ['invalid_payload', invalid, 3],
      ]),
    );
    expect(errors).toHaveLength(6);
    expect(errors[0]?.message).toMatch(/dead-letter queue after maxReceiveCount/);
  });

  it('unknown triggers reach onUnknown and onAny, as in the receiver', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const poll = { trigger: 'poll_voted', appId: 'app', webhook: 'w', data: { poll: { id: '7' }, extra: [1, 2] } };
    queue.send({ Id: 'u', MessageBody: JSON.stringify(poll) });
    const webhooks = createWebhooks({ auth: false, logger: {} });
    const seen: string[] = [];
    webhooks.onUnknown((event, { attempt }) => void seen.push(`unknown ${event.trigger} ${attempt}`));
    webhooks.onAny((event) => void seen.push(`any ${event.trigger}`));
    const { failed } = await deliver(queue, sqsHandler(webhooks));
    expect(failed).toEqual([]);
    expect(seen.sort()).toEqual(['any poll_voted', 'unknown poll_voted 1']);
  });

  it('a record that cannot even be read fails alone, reported; the rest of the batch is handled', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('fine')]);
    const { handler, runs, errors } = consumer();
    const event = lambdaEvent(queue, queue.receive(10));
    const broken = { ...event.Records[0]!, messageId: 'broken', body: undefined as unknown as string };
    broken.messageAttributes = { 'webhook-body-encoding': { dataType: 'String', stringValue: 'base64' } };
    const answer = await handler({ Records: [broken, ...event.Records] });
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'broken' }]);
    expect(runs.map(([text]) => text)).toEqual(['fine']);
    expect(errors.map((error) => error.code)).toEqual(['invalid_envelope']);
  });

  it('every junk record is reported once with its body and message id, and fails alone; the good one is handled', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('fine')]);
    const { handler, runs, errors } = consumer();
    const [good] = lambdaEvent(queue, queue.receive(10)).Records;
    const like = (messageId: string, body: unknown) => ({ ...good!, messageId, body: body as string });
    const junk = [
      like('array', '[1,2,3]'),
      like('number', '5'),
      like('null-json', 'null'),
      like('no-trigger', '{}'),
      like('not-json', '{"trigger":'),
      like('no-body', undefined),
      like('number-body', 42),
      // An object is not the string SQS delivers, even one shaped like an event: never handled as one.
      like('object-body', JSON.parse(JSON.stringify(message('smuggled')))),
    ];
    const nameless = [null, 7, 'text', { ...good!, messageId: undefined }, { ...good!, messageId: '' }];
    const records = [...nameless.slice(0, 2), junk[0], good, ...junk.slice(1), ...nameless.slice(2)] as never[];

    const answer = await handler({ Records: records });
    expect(runs.map(([text]) => text)).toEqual(['fine']);
    // Only records SQS can be told about: an entry without a messageId would fail the whole batch.
    expect(answer.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(junk.map((record) => record.messageId).sort());
    expect(errors).toHaveLength(junk.length + nameless.length);
    for (const record of junk) {
      const reported = errors.filter((error) => new RegExp(`SQS message ${record.messageId}[ ,]`).test(error.message));
      expect(reported, record.messageId).toHaveLength(1);
      expect(reported[0]?.rawBody).toBe(typeof record.body === 'string' ? record.body : undefined);
      expect(reported[0]?.attempt).toBe(1);
      expect(reported[0]?.message).toMatch(/dead-letter queue after maxReceiveCount/);
    }
    expect(errors.filter((error) => /without a messageId/.test(error.message))).toHaveLength(nameless.length);
  });

  it('a batch of only a null record (FIFO or not) is answered, not thrown', async () => {
    const { handler, errors } = consumer();
    expect(await handler({ Records: [null as never] })).toEqual({ batchItemFailures: [] });
    const fifo = consumer({ fifo: true });
    expect(await fifo.handler({ Records: [null as never] })).toEqual({ batchItemFailures: [] });
    expect([...errors, ...fifo.errors].map((error) => error.code)).toEqual(['invalid_envelope', 'invalid_envelope']);
  });

  it('a message not sent by sqsQueue (an enqueue of your own): key from the event, receipt time from SentTimestamp', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const event = message('own');
    queue.send({ Id: 'own', MessageBody: JSON.stringify(event) });
    const { handler, runs } = consumer();
    await deliver(queue, handler);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.[1].key).toBe(idempotencyKey(event));
    // SentTimestamp is SQS's clock: the simulator's, which this file's earlier visibility timeouts moved on.
    expect(Math.abs((runs[0]?.[1].receivedAt as number) - sqs.clock.now())).toBeLessThan(5000);
  });

  it('a body that travelled base64-encoded is decoded back to the exact bytes', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('not a character: \uFFFF')]);
    expect(queue.messages[0]?.body).not.toContain('\uFFFF');
    const { handler, runs } = consumer();
    await deliver(queue, handler);
    expect(runs.map(([text]) => text)).toEqual(['not a character: \uFFFF']);
  });

  it('handlers still running as the invocation ends: answered in time, the record failed back, reported', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('slow'), message('quick')]);
    const { handler, errors } = consumer({}, (text) => (text === 'slow' ? 'hang' : false));
    const started = Date.now();
    const { failed, messages } = await deliver(queue, handler, 10, 800);
    expect(Date.now() - started).toBeLessThan(800);
    expect(failed).toEqual([messages.find((m) => m.body.includes('"slow"'))?.messageId]);
    expect(errors.map((error) => [error.code, error.willRetry])).toEqual([['handler_timeout', true]]);
  });

  it('an invocation with less time left than the margin starts no handler and fails every record back', async () => {
    const queue = sqs.queue(`consume-${++names}.fifo`);
    await enqueue(queue, [message('a'), message('b', 'other')]);
    const { handler, runs } = consumer({ idempotency: memoryIdempotency() });
    const { failed, messages } = await deliver(queue, handler, 10, 400);
    expect(failed).toEqual(messages.map((m) => m.messageId));
    expect(runs).toEqual([]);
    // Nothing was claimed either: the next delivery runs them at once.
    queue.timeOut();
    expect((await deliver(queue, handler)).failed).toEqual([]);
    expect(runs.map(([text]) => text).sort()).toEqual(['a', 'b']);
  });

  it('refuses what cannot work', () => {
    const webhooks = createWebhooks({ auth: false });
    expect(() => sqsHandler({} as never)).toThrow(/sqsHandler needs the receiver made by createWebhooks/);
    expect(() => sqsHandler(webhooks, { idempotency: {} as never })).toThrow(/idempotency/);
    expect(() => sqsHandler(webhooks, { fifo: 'yes' as never })).toThrow(/fifo/);
    expect(() => sqsHandler(webhooks, { idempotence: memoryIdempotency() } as never)).toThrow(/idempotence/);
    return expect(sqsHandler(webhooks)({} as never)).rejects.toThrow(/not from SQS/);
  });

  it('types: takes @types/aws-lambda SQS events and is an SQSHandler', () => {
    const handler = sqsHandler(createWebhooks({ auth: false }));
    expectTypeOf(handler).toBeCallableWith({ Records: [] } as SQSEvent);
    expectTypeOf(handler).returns.resolves.toMatchTypeOf<SQSBatchResponse>();
    const asAws: SQSHandler = handler;
    expect(typeof asAws).toBe('function');
  });
});

describe('sqsHandler with an idempotency store: each key handled once across redeliveries', () => {
  it('a repeat of a handled key is skipped and reported to onDuplicate, and is not failed back', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const event = message('once');
    const [key] = await enqueue(queue, [event]);
    const { handler, runs, duplicates } = consumer({ idempotency: memoryIdempotency() });
    await deliver(queue, handler);
    // A standard queue hands the same message out again (at least once), or the platform's retry landed again.
    await enqueue(queue, [event]);
    const again = await deliver(queue, handler);
    expect(again.failed).toEqual([]);
    expect(runs.map(([text]) => text)).toEqual(['once']);
    expect(duplicates).toEqual([key]);
    expect(queue.messages).toEqual([]);
  });

  it('a repeat while the key is in progress (same batch) fails back, and is skipped once the first completed', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const event = message('twice in a batch');
    await enqueue(queue, [event]);
    await enqueue(queue, [event]);
    const { handler, runs, duplicates } = consumer({ idempotency: memoryIdempotency() });
    const first = await deliver(queue, handler);
    expect(first.failed).toHaveLength(1);
    queue.timeOut();
    const second = await deliver(queue, handler);
    expect(second.failed).toEqual([]);
    expect(runs).toHaveLength(1);
    expect(duplicates).toHaveLength(1);
  });

  it('keys that SQS-style escaping made one (webhook `w\\uFFFE` and the text `w\\\\ufffe`) come back apart: both handled (issue 33)', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    const first = message('first');
    const second = { ...message('second'), webhook: 'w\\ufffe' } as ParsedWebhook;
    first.webhook = 'w\uFFFE';
    (second.data as { message: { id: string } }).message.id = (first.data as { message: { id: string } }).message.id;
    const keys = await enqueue(queue, [first, second]);
    expect(keys[0]).not.toBe(keys[1]);
    const { handler, runs, duplicates } = consumer({ idempotency: memoryIdempotency() });
    expect((await deliver(queue, handler)).failed).toEqual([]);
    expect(runs.map(([text, { key }]) => [text, key])).toEqual([
      ['first', keys[0]],
      ['second', keys[1]],
    ]);
    expect(duplicates).toEqual([]);
  });

  it('a failed run releases its key: the redelivery runs the handlers again', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('flaky')]);
    const { handler, runs } = consumer({ idempotency: memoryIdempotency() }, (_text, { attempt }) => attempt === 1);
    expect((await deliver(queue, handler)).failed).toHaveLength(1);
    queue.timeOut();
    expect((await deliver(queue, handler)).failed).toEqual([]);
    expect(runs.map(([, context]) => context.attempt)).toEqual([1, 2]);
  });

  it('a store that cannot be reached fails the record back without running handlers, reported', async () => {
    const queue = sqs.queue(`consume-${++names}`);
    await enqueue(queue, [message('store down')]);
    const down: IdempotencyStore = { begin: () => Promise.reject(new Error('DynamoDB unreachable')), complete: async () => undefined, release: async () => undefined };
    const { handler, runs, errors } = consumer({ idempotency: down });
    expect((await deliver(queue, handler)).failed).toHaveLength(1);
    expect(runs).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
  });
});
