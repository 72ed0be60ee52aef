/**
 * sqsHandler at its edges: each option refused with its sentence, the lease and the deadline taken from the
 * Lambda context to the millisecond (the clock stood still: only `Date` is faked), FIFO found from any record
 * of the batch or forced either way, what each kind of failure reports, and no timer left behind. Records are
 * built by the SQS simulator (test/support/sqs-simulator/) from messages sqsQueue sent through the real SDK.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryIdempotency, sqsHandler, sqsQueue, type IdempotencyStore, type SqsHandlerOptions, type SqsRecord } from '../../../adapters/aws/index.js';
import { ConfigurationError, createWebhooks, idempotencyKey, type HandlerContext, type ParsedWebhook, type WebhookError } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { lambdaEvent, sqsSimulatorPerSuite, type SimulatedQueue as Queue } from '../../support/sqs-simulator/index.js';

const sqs = sqsSimulatorPerSuite();
afterEach(() => void vi.useRealTimers());

let names = 0;
let ids = 0;
const message = (text: string, conversationId = 'superhero1_user_superhero2') =>
  createTestEvent('message_sent', { data: { message: { id: String(++ids), conversationId, data: { text } } } });

/** The records of these events, sent by sqsQueue into a new queue and received at once. */
async function records(events: ParsedWebhook[], fifo = false): Promise<{ queue: Queue; records: SqsRecord[]; keys: string[] }> {
  const queue = sqs.queue(`handler-edges-${++names}${fifo ? '.fifo' : ''}`);
  const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client() });
  const keys = events.map((event) => idempotencyKey(event));
  for (const [index, event] of events.entries()) {
    await inbox.put({ key: keys[index] as string, trigger: event.trigger, event, rawBody: JSON.stringify(event), receivedAt: 1_700_000_000_000 + index });
  }
  return { queue, records: lambdaEvent(queue, queue.receive(10)).Records, keys };
}

function consumer(options: SqsHandlerOptions = {}, fail: (text: string) => boolean = () => false) {
  const webhooks = createWebhooks({ auth: false, logger: {} });
  const runs: Array<[string, HandlerContext]> = [];
  const errors: WebhookError[] = [];
  const duplicates: Array<{ key: string; receivedAt: number }> = [];
  webhooks.on('message_sent', async (event, context) => {
    const text = (event.data.message.data as { text: string }).text;
    runs.push([text, { ...context }]);
    if (fail(text)) throw new Error(`handler failed on ${text}`);
  });
  webhooks.onError((error) => void errors.push(error));
  webhooks.onDuplicate((_event, { key, receivedAt }) => void duplicates.push({ key, receivedAt }));
  return { handler: sqsHandler(webhooks, options), runs, errors, duplicates, texts: () => runs.map(([text]) => text) };
}

const failedIds = (answer: { batchItemFailures: Array<{ itemIdentifier: string }> }) => answer.batchItemFailures.map((f) => f.itemIdentifier);

/** A memory store that notes each lease asked for. */
function noting(): { store: IdempotencyStore; leases: number[] } {
  const inner = memoryIdempotency();
  const leases: number[] = [];
  return { leases, store: { ...inner, begin: (key, leaseMs) => (leases.push(leaseMs), inner.begin(key, leaseMs)) } };
}

describe('sqsHandler options', () => {
  const refusal = (webhooks: unknown, options?: unknown): [string, string] | undefined => {
    try {
      sqsHandler(webhooks as never, options as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return [(error as ConfigurationError).option, (error as Error).message];
    }
    return undefined;
  };
  const webhooks = createWebhooks({ auth: false, logger: {} });

  it('the receiver: one with receive and report', () => {
    const needed = 'sqsHandler needs the receiver made by createWebhooks({ auth: … }): sqsHandler(createWebhooks({ auth: false }).on(…), { idempotency }).';
    for (const given of [undefined, null, {}, { receive: () => undefined }, { report: () => undefined }, { receive: 1, report: () => undefined }]) {
      const [option, message] = refusal(given) ?? [];
      expect(option, JSON.stringify(given)).toBe('webhooks');
      expect(message, JSON.stringify(given)).toMatch(new RegExp(`^${needed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} It got `));
    }
    expect(refusal(webhooks)).toBeUndefined();
  });

  it('idempotency: a store with begin and complete', () => {
    const store = '`idempotency` must be a store: dynamoIdempotency({ tableName }) or memoryIdempotency().';
    const fn = async () => undefined;
    for (const idempotency of [null, {}, 'store', { begin: fn }, { complete: fn }, { begin: 1, complete: fn }]) {
      expect(refusal(webhooks, { idempotency }), JSON.stringify(idempotency)).toEqual(['idempotency', store]);
    }
    expect(refusal(webhooks, { idempotency: memoryIdempotency() })).toBeUndefined();
    expect(refusal(webhooks, { idempotency: undefined })).toBeUndefined();
  });

  it('fifo: true or false', () => {
    for (const fifo of ['yes', 1, 0, null]) expect(refusal(webhooks, { fifo }), String(fifo)).toEqual(['fifo', '`fifo` must be true or false.']);
    for (const fifo of [true, false, undefined]) expect(refusal(webhooks, { fifo }), String(fifo)).toBeUndefined();
  });

  it('an unknown option is named, with the known ones', () => {
    expect(refusal(webhooks, { idempotence: memoryIdempotency() })).toEqual([
      'idempotence',
      expect.stringMatching(/^Unknown option "idempotence" for sqsHandler\..* Known options: idempotency, fifo\.$/),
    ]);
  });

  it('an event that is not from SQS is a TypeError saying so', async () => {
    const handler = sqsHandler(webhooks);
    for (const event of [undefined, null, {}, { Records: 'x' }, { Records: { length: 1 } }]) {
      await expect(handler(event as never), JSON.stringify(event)).rejects.toThrow(
        new TypeError('sqsHandler got an event that is not from SQS: expected { Records: [...] } from an SQS event source mapping.'),
      );
    }
    expect(await handler({ Records: [] })).toEqual({ batchItemFailures: [] });
  });
});

describe('sqsHandler: the lease and the deadline', () => {
  it('the lease is the invocation\'s remaining time, else Lambda\'s longest (15 min)', async () => {
    const { records: batch } = await records([message('a')]);
    const { store, leases } = noting();
    const { handler } = consumer({ idempotency: store });
    await handler({ Records: batch }, { getRemainingTimeInMillis: () => 7_000 });
    await handler({ Records: [{ ...batch[0]!, messageId: 'again' }] });
    await handler({ Records: [{ ...batch[0]!, messageId: 'third' }] }, {});
    expect(leases).toEqual([7_000, 900_000, 900_000]);
  });

  it('500 ms kept back: with exactly 500 ms left nothing starts, with 501 it does', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_800_000_000_000 });
    const { records: batch } = await records([message('a')]);
    const { handler, texts } = consumer();
    expect(failedIds(await handler({ Records: batch }, { getRemainingTimeInMillis: () => 500 }))).toEqual([batch[0]?.messageId]);
    expect(texts()).toEqual([]);
    expect(failedIds(await handler({ Records: batch }, { getRemainingTimeInMillis: () => 501 }))).toEqual([]);
    expect(texts()).toEqual(['a']);
  });

  it('a handler that takes a while within the remaining time succeeds; no timer is left behind', async () => {
    const { records: batch } = await records([message('slow')]);
    const webhooks = createWebhooks({ auth: false, logger: {} });
    const setTimer = globalThis.setTimeout;
    webhooks.on('message_sent', () => new Promise((resolve) => setTimer(resolve, 30)));
    // The timers the handler's deadline sets during the call (a minute away here), and those cleared: counting
    // every active timer of the process instead failed when another suite's timer ended during the call.
    const deadlines: unknown[] = [];
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      const timer = setTimer(callback, ms);
      if ((ms ?? 0) > 1000) deadlines.push(timer);
      return timer;
    }) as typeof setTimeout);
    const cleared = vi.spyOn(globalThis, 'clearTimeout');
    try {
      const answer = await sqsHandler(webhooks)({ Records: batch }, { getRemainingTimeInMillis: () => 60_000 });
      expect(answer).toEqual({ batchItemFailures: [] });
    } finally {
      vi.restoreAllMocks();
    }
    expect(deadlines.length).toBeGreaterThan(0);
    for (const timer of deadlines) expect(cleared).toHaveBeenCalledWith(timer);
  });

  it('without a context (no deadline), a handler that takes a while is waited for', async () => {
    const { records: batch } = await records([message('slow')]);
    const webhooks = createWebhooks({ auth: false, logger: {} });
    webhooks.on('message_sent', () => new Promise((resolve) => setTimeout(resolve, 30)));
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    expect(await sqsHandler(webhooks)({ Records: batch })).toEqual({ batchItemFailures: [] });
    expect(errors).toEqual([]);
  });

  it('still running at the deadline: handler_timeout names the trigger and says SQS delivers it again', async () => {
    const { records: batch, keys } = await records([message('hang')]);
    const webhooks = createWebhooks({ auth: false, logger: {} });
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    expect(failedIds(await sqsHandler(webhooks)({ Records: batch }, { getRemainingTimeInMillis: () => 560 }))).toEqual([batch[0]?.messageId]);
    expect(errors.map((e) => [e.code, e.message, e.key, e.attempt, e.willRetry, e.rawBody])).toEqual([
      [
        'handler_timeout',
        'The handlers of a "message_sent" event were still running as the invocation\'s time ran out; SQS will deliver it again.',
        keys[0],
        1,
        true,
        batch[0]?.body,
      ],
    ]);
  });

  it('the key sqsQueue sent is the one the handlers get, even where it is not the event\'s own', async () => {
    const event = message('custom');
    const queue = sqs.queue(`handler-edges-${++names}`);
    await sqsQueue({ queueUrl: queue.url, client: sqs.client() }).put({ key: 'my-own-key', trigger: event.trigger, event, rawBody: JSON.stringify(event), receivedAt: 1 });
    const { handler, runs } = consumer();
    await handler(lambdaEvent(queue, queue.receive(10)));
    expect(runs.map(([, context]) => context.key)).toEqual(['my-own-key']);
  });
});

describe('sqsHandler: FIFO, found or forced', () => {
  const failA = (text: string) => text === 'a';

  it('one FIFO record anywhere in the batch (after a null one) makes it ordered: the rest of a group fails after a failure', async () => {
    const { records: batch } = await records([message('a'), message('b')], true);
    const { handler, texts } = consumer({}, failA);
    const answer = await handler({ Records: [null as never, ...batch] });
    expect(texts()).toEqual(['a']);
    expect(failedIds(answer)).toEqual(batch.map((record) => record.messageId));
  });

  it('fifo: false runs a FIFO queue\'s records side by side; fifo: true orders a standard queue\'s (one group)', async () => {
    const fifoQueue = await records([message('a'), message('b')], true);
    const unordered = consumer({ fifo: false }, failA);
    expect(failedIds(await unordered.handler({ Records: fifoQueue.records }))).toEqual([fifoQueue.records[0]?.messageId]);
    expect(unordered.texts().sort()).toEqual(['a', 'b']);

    const standard = await records([message('a'), message('b')]);
    const ordered = consumer({ fifo: true }, failA);
    expect(failedIds(await ordered.handler({ Records: standard.records }))).toEqual(standard.records.map((record) => record.messageId));
    expect(ordered.texts()).toEqual(['a']);
  });

  it('ordered records without attributes are one group, read with attempt 1', async () => {
    const { records: batch } = await records([message('a'), message('b')]);
    const bare = batch.map((record) => ({ ...record, attributes: undefined as never }));
    const { handler, runs } = consumer({ fifo: true });
    expect(failedIds(await handler({ Records: bare }))).toEqual([]);
    expect(runs.map(([text, context]) => [text, context.attempt])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });
});

describe('sqsHandler: what each failure reports', () => {
  it('a record whose reading throws: reported with the error as its cause, the rest handled', async () => {
    const { records: batch } = await records([message('fine')]);
    const boom = new Error('boom');
    const odd = { ...batch[0]!, messageId: 'odd', messageAttributes: {} as SqsRecord['messageAttributes'] };
    Object.defineProperty(odd.messageAttributes, 'webhook-body-encoding', { enumerable: true, get: () => { throw boom; } });
    const { handler, texts, errors } = consumer();
    expect(failedIds(await handler({ Records: [odd, ...batch] }))).toEqual(['odd']);
    expect(texts()).toEqual(['fine']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'invalid_envelope',
      cause: boom,
      rawBody: odd.body,
      attempt: 1,
      message: 'SQS message odd could not be read (Error: boom); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.',
    });
  });

  it('what is wrong with a record is said; its receive count is its attempt only when a whole number from 1', async () => {
    const { records: batch } = await records([message('x')]);
    const good = batch[0]!;
    const count = (messageId: string, ApproximateReceiveCount: string) => ({ ...good, messageId, body: undefined as never, attributes: { ...good.attributes, ApproximateReceiveCount } });
    const { handler, errors } = consumer();
    await handler({ Records: [count('c0', '0'), count('c2', '2'), count('c15', '1.5'), { ...good, messageId: 'n', body: 7 as never }, null as never, 'text' as never, { ...good, messageId: '' }] });
    expect(errors.map((error) => [error.message, error.attempt, error.rawBody])).toEqual([
      ['SQS message c0 could not be read (the record has no body); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.', undefined, undefined],
      ['SQS message c2 could not be read (the record has no body); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.', 2, undefined],
      ['SQS message c15 could not be read (the record has no body); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.', undefined, undefined],
      ['SQS message n could not be read (its body is number, not a string); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.', 1, undefined],
      ['An SQS record could not be read (the record is null, not an SQS message); without a messageId it cannot be named to SQS as failed, so it is not delivered again.', undefined, undefined],
      ['An SQS record could not be read (the record is string, not an SQS message); without a messageId it cannot be named to SQS as failed, so it is not delivered again.', undefined, undefined],
      ['An SQS record could not be read (the record has no messageId); without a messageId it cannot be named to SQS as failed, so it is not delivered again.', 1, good.body],
    ]);
  });

  it('a body that is no webhook: the parse error with its message id and receive, the key when sqsQueue sent one', async () => {
    const { records: batch, keys } = await records([message('x')]);
    const { handler, errors } = consumer();
    const sent = { ...batch[0]!, body: '{"trigger":', attributes: { ...batch[0]!.attributes, ApproximateReceiveCount: '2' } };
    const own = { ...sent, messageId: 'own', messageAttributes: {} };
    expect(failedIds(await handler({ Records: [sent, own] })).sort()).toEqual([sent.messageId, 'own'].sort());
    const [fromQueue, fromOwn] = [errors.find((e) => e.message.includes(sent.messageId)), errors.find((e) => e.message.includes('own'))];
    expect(fromQueue?.message).toMatch(
      new RegExp(`^.+ \\(SQS message ${sent.messageId}, receive 2: it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives\\.\\)$`),
    );
    expect(fromQueue).toMatchObject({ key: keys[0], attempt: 2, rawBody: '{"trigger":' });
    expect((fromQueue?.cause as WebhookError | undefined)?.code).toBe(fromQueue?.code);
    expect(fromOwn?.key).toBeUndefined();
  });

  it('the store: a repeat is reported to onDuplicate with key and receipt time; a failing begin or complete is inbox_failed with the key', async () => {
    const { records: batch, keys } = await records([message('a')]);
    const store = memoryIdempotency();
    const { handler, duplicates, errors, texts } = consumer({ idempotency: store });
    expect(failedIds(await handler({ Records: batch }))).toEqual([]);
    expect(failedIds(await handler({ Records: batch }))).toEqual([]);
    expect(texts()).toEqual(['a']);
    expect(duplicates).toEqual([{ key: keys[0], receivedAt: 1_700_000_000_000 }]);

    const cause = new Error('unreachable');
    const broken = (part: 'begin' | 'complete' | 'release'): IdempotencyStore => ({ ...memoryIdempotency(), [part]: () => Promise.reject(cause) });
    for (const [part, failed] of [['begin', true], ['complete', false]] as const) {
      const run = consumer({ idempotency: broken(part) });
      expect(failedIds(await run.handler({ Records: batch })), part).toEqual(failed ? [batch[0]?.messageId] : []);
      expect(run.texts(), part).toEqual(failed ? [] : ['a']);
      expect(run.errors.map((e) => [e.code, e.key, e.attempt, e.cause, e.rawBody]), part).toEqual([['inbox_failed', keys[0], 1, cause, batch[0]?.body]]);
      expect(run.errors[0]?.message).toBe('The idempotency store could not be reached; an unclaimed record goes back to SQS.');
    }
    // A failed run whose release fails: failed back, reported twice (the handler, the store).
    const released = consumer({ idempotency: broken('release') }, () => true);
    expect(failedIds(await released.handler({ Records: batch }))).toEqual([batch[0]?.messageId]);
    expect(released.errors.map((e) => e.code)).toEqual(['handler_failed', 'inbox_failed']);
  });

  it('a key still running elsewhere (busy) fails back without running', async () => {
    const { records: batch, keys } = await records([message('a')]);
    const store = memoryIdempotency();
    await store.begin(keys[0] as string, 60_000);
    const { handler, texts, errors } = consumer({ idempotency: store });
    expect(failedIds(await handler({ Records: batch }))).toEqual([batch[0]?.messageId]);
    expect(texts()).toEqual([]);
    expect(errors).toEqual([]);
  });
});
