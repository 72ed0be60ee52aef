/**
 * Trace context across the inbox, with the real SDK and every inbox: the request's SERVER span has a
 * PRODUCER child around the commit, whose traceparent the inbox stores; each worker attempt is a CONSUMER
 * span in a new trace, LINKED to that producer span: in one process, across a SQLite restart, and across two
 * processes on Redis. A retried event shows one consumer span per attempt.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhooks, createWorker, memoryInbox, type Inbox } from '../../src/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { redisPerSuite } from '../support/redis-server.js';
import { sdk, valueOf, waitFor } from './sdk.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'otel-inbox-'));
const redis = redisPerSuite();
let serial = 0;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const message = (id: string) => createTestEvent('message_sent', { data: { message: { id } } });
const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);

const inboxes: Record<string, () => Inbox> = {
  memory: () => memoryInbox(),
  sqlite: () => sqliteInbox({ path: join(dir, `one-${++serial}.sqlite`), pollMs: 10 }),
  redis: () => redisInbox({ url: redis.server.url, prefix: `otel-${++serial}`, pollMs: 10 }),
};

/** The producer span's context is what the consumer span links to. */
function expectLinked(consumer: ReadableSpan | undefined, producer: ReadableSpan | undefined): void {
  expect(consumer?.links.map((link) => link.context.spanId)).toEqual([producer?.spanContext().spanId]);
  expect(consumer?.links[0]?.context.traceId).toBe(producer?.spanContext().traceId);
  // A new trace: the work was done later, and the conventions link it rather than parent it.
  expect(consumer?.spanContext().traceId).not.toBe(producer?.spanContext().traceId);
}

describe.each(Object.keys(inboxes))('telemetry with the %s inbox', (kind) => {
  it('links the worker’s consumer span to the producer span stored with the entry', async () => {
    const otel = sdk();
    const inbox = inboxes[kind]!();
    const webhooks = createWebhooks({ auth: false, inbox, telemetry: otel.telemetry, logLevel: 'silent' });
    cleanups.push(() => inbox.close(), () => webhooks.close(), () => otel.shutdown());
    let handled = 0;
    webhooks.on('message_sent', () => void handled++);

    expect((await webhooks.handle(buildRequest(message('m1')))).status).toBe(200);
    await waitFor(() => handled === 1 && named(otel.spans(), `process ${kind}`).length === 1);

    const [server] = otel.spans().filter((span) => span.kind === SpanKind.SERVER);
    const [producer] = named(otel.spans(), `send ${kind}`);
    const [consumer] = named(otel.spans(), `process ${kind}`);
    expect(producer?.kind).toBe(SpanKind.PRODUCER);
    expect(producer?.parentSpanContext?.spanId).toBe(server?.spanContext().spanId);
    expect(producer?.attributes).toMatchObject({ 'messaging.operation.type': 'send', 'messaging.destination.name': kind });
    expect(consumer?.kind).toBe(SpanKind.CONSUMER);
    expect(consumer?.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.destination.name': kind,
      'chat_webhooks.attempt': 1,
      'chat_webhooks.trigger': 'message_sent',
    });
    expect(consumer?.attributes['chat_webhooks.idempotency_key.digest']).toBe(server?.attributes['chat_webhooks.idempotency_key.digest']);
    expectLinked(consumer, producer);
    // Handlers run by the worker are not children of the request.
    expect(named(otel.spans(), 'handle message_sent')).toEqual([]);

    const commits = await otel.points('chat_webhooks.inbox.commit.duration');
    expect(valueOf(commits, { 'chat_webhooks.inbox': kind, 'chat_webhooks.outcome': 'stored' })).toBe(1);
    expect((await webhooks.handle(buildRequest(message('m1')))).status).toBe(200);
    const deliveries = await otel.points('chat_webhooks.deliveries');
    expect(valueOf(deliveries, { 'chat_webhooks.outcome': 'accepted' })).toBe(1);
    expect(valueOf(deliveries, { 'chat_webhooks.outcome': 'duplicate' })).toBe(1);
  });

  it('shows a retried event as one consumer span per attempt, its failure as error.type', async () => {
    const otel = sdk();
    const inbox = inboxes[kind]!();
    const worker = createWorker({ inbox, telemetry: otel.telemetry, retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 }, logger: {} });
    const receiver = createWebhooks({ auth: false, inbox, consume: false, telemetry: otel.telemetry, logLevel: 'silent' });
    cleanups.push(() => inbox.close(), () => worker.close(), () => receiver.close(), () => otel.shutdown());
    const attempts: Record<string, number> = {};
    worker.on('message_sent', (event, { attempt }) => {
      attempts[event.data.message.id] = attempt;
      // m-retried fails once then succeeds; m-dead fails on both of its attempts.
      if (event.data.message.id === 'm-dead' || attempt === 1) throw new Error('not yet');
    });
    worker.start();
    await receiver.handle(buildRequest(message('m-retried')));
    await receiver.handle(buildRequest(message('m-dead')));
    await waitFor(() => named(otel.spans(), `process ${kind}`).length === 4);

    const [producerA, producerB] = named(otel.spans(), `send ${kind}`);
    const consumers = named(otel.spans(), `process ${kind}`);
    for (const producer of [producerA, producerB]) {
      const own = consumers.filter((span) => span.links[0]?.context.spanId === producer?.spanContext().spanId);
      expect(own.map((span) => span.attributes['chat_webhooks.attempt']).sort()).toEqual([1, 2]);
    }
    const failed = consumers.filter((span) => span.status.code === SpanStatusCode.ERROR);
    expect(failed).toHaveLength(3);
    for (const span of failed) expect(span.attributes['error.type']).toBe('handler_failed');

    const failures = await otel.points('chat_webhooks.handler.failures');
    expect(valueOf(failures, { 'error.type': 'handler_failed', 'chat_webhooks.final': false })).toBe(2);
    expect(valueOf(failures, { 'error.type': 'handler_failed', 'chat_webhooks.final': true })).toBe(1);
    expect(valueOf(await otel.points('chat_webhooks.dead'), { 'chat_webhooks.inbox': kind })).toBe(1);
    const durations = await otel.points('chat_webhooks.handler.duration');
    expect(valueOf(durations, { 'chat_webhooks.outcome': 'success' })).toBe(1);
    expect(valueOf(durations, { 'chat_webhooks.outcome': 'failure' })).toBe(3);
  });

  it('reports the inbox’s entries by state and its oldest pending age, read at collection', async () => {
    const otel = sdk();
    const inbox = inboxes[kind]!();
    const receiver = createWebhooks({ auth: false, inbox, consume: false, telemetry: otel.telemetry, logLevel: 'silent' });
    cleanups.push(() => inbox.close(), () => receiver.close(), () => otel.shutdown());
    for (const id of ['g1', 'g2', 'g3']) expect((await receiver.handle(buildRequest(message(id)))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));

    let entries = await otel.points('chat_webhooks.inbox.entries');
    expect(valueOf(entries, { 'chat_webhooks.inbox.state': 'pending' })).toBe(3);
    expect(valueOf(entries, { 'chat_webhooks.inbox.state': 'dead' })).toBe(0);
    const [age] = await otel.points('chat_webhooks.inbox.oldest_pending_age');
    expect(age?.value).toBeGreaterThanOrEqual(0.05);

    const worker = createWorker({ inbox, retry: { attempts: 1 }, logger: {} }).on('message_sent', () => {
      throw new Error('fails');
    });
    cleanups.push(() => worker.close());
    worker.start();
    await waitFor(async () => (await inbox.stats()).dead === 3);
    entries = await otel.points('chat_webhooks.inbox.entries');
    expect(valueOf(entries, { 'chat_webhooks.inbox.state': 'pending' })).toBe(0);
    expect(valueOf(entries, { 'chat_webhooks.inbox.state': 'dead' })).toBe(3);
    expect((await otel.points('chat_webhooks.inbox.oldest_pending_age'))[0]?.value).toBe(0);
  });
});

describe('trace context across a restart and across processes', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/src/telemetry/otel/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it('links the consumer span to the producer span stored before a SQLite restart', async () => {
    const path = join(dir, 'restart.sqlite');
    const before = sdk();
    const first = sqliteInbox({ path });
    const receiver = createWebhooks({ auth: false, inbox: first, consume: false, telemetry: before.telemetry, logLevel: 'silent' });
    expect((await receiver.handle(buildRequest(message('r1')))).status).toBe(200);
    await receiver.close();
    await first.close();
    const [producer] = named(before.spans(), 'send sqlite');

    // Another "process": a new inbox on the file, a new SDK.
    const after = sdk();
    const second = sqliteInbox({ path, pollMs: 10 });
    const worker = createWorker({ inbox: second, telemetry: after.telemetry, logger: {} }).on('message_sent', () => undefined);
    cleanups.push(() => second.close(), () => worker.close(), () => before.shutdown(), () => after.shutdown());
    worker.start();
    await waitFor(() => named(after.spans(), 'process sqlite').length === 1);
    expectLinked(named(after.spans(), 'process sqlite')[0], producer);
  });

  it('links the consumer span of a worker in another process on Redis to the producer span', async () => {
    const prefix = `otel-two-${++serial}`;
    const child = spawn(process.execPath, [fileURLToPath(new URL('worker-process.mjs', import.meta.url))], {
      cwd: root,
      env: { ...process.env, REDIS_URL: redis.server.url, PREFIX: prefix },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    cleanups.push(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    });
    await waitFor(() => output.includes('ready'), 15_000);

    const otel = sdk();
    const inbox = redisInbox({ url: redis.server.url, prefix });
    const receiver = createWebhooks({ auth: false, inbox, consume: false, telemetry: otel.telemetry, logLevel: 'silent' });
    cleanups.push(() => inbox.close(), () => receiver.close(), () => otel.shutdown());
    expect((await receiver.handle(buildRequest(message('p1')))).status).toBe(200);
    await waitFor(() => output.includes('"process redis"'), 10_000);

    const [producer] = named(otel.spans(), 'send redis');
    const consumer = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { span: string; kind: string; traceId: string; links: Array<{ traceId: string; spanId: string }>; attributes: Record<string, unknown> })
      .find((span) => span.span === 'process redis');
    expect(consumer?.kind).toBe('CONSUMER');
    expect(consumer?.links).toEqual([{ traceId: producer?.spanContext().traceId, spanId: producer?.spanContext().spanId }]);
    expect(consumer?.attributes['chat_webhooks.attempt']).toBe(1);
    expect(consumer?.traceId).not.toBe(producer?.spanContext().traceId);
  });
});
