/**
 * What openTelemetry() records, attribute by attribute, with the real SDK: durations in seconds, the scheme and
 * route, the conventions' status per answer, the conversation digest and the recorded body's cut, in-request
 * handler failures (each code counted alone), the commit's failure, the messaging attributes of the producer and
 * consumer spans, a span already current (under a context manager), and the inbox gauges' bookkeeping (an inbox
 * observed twice is read once, stopped observers, inboxes that cannot answer or tell their oldest entry).
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhooks, createWorker, memoryInbox, WebhookError, type ParsedWebhook, type WebhooksOptions } from '../../src/index.js';
import { openTelemetry, type ObservedInbox } from '../../src/telemetry/otel/index.js';
import { attemptInfo } from '../../src/dispatch/attempts.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { sdk, valueOf, waitFor, type Point } from './sdk.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
/** A span made current by the application (an HTTP instrumentation's, say). */
const OUTER_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const OUTER_SPAN_ID = 'b7ad6b7169203331';

/** The API's context, kept on a stack for synchronous calls: enough to make a span current. */
class StackContextManager implements ContextManager {
  #stack: Context[] = [];
  active(): Context {
    return this.#stack.at(-1) ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    this.#stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#stack = [];
    return this;
  }
}

/** Metrics read on demand, with their descriptors (sdk.ts's reader gives the points only). */
class PullReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

beforeAll(() => void context.setGlobalContextManager(new StackContextManager()));
afterAll(() => context.disable());

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function traced(options: Partial<WebhooksOptions> = {}, otelOptions: Parameters<typeof sdk>[0] = {}) {
  const otel = sdk(otelOptions);
  const webhooks = createWebhooks({ auth: false, logLevel: 'silent', telemetry: otel.telemetry, ...options });
  closers.push(() => otel.shutdown(), () => webhooks.close());
  return { otel, webhooks };
}

const servers = (spans: ReadableSpan[]) => spans.filter((span) => span.kind === SpanKind.SERVER);
const histogram = (point: Point | undefined) => point?.value as Histogram;
const unknownEvent = (data: unknown) => JSON.stringify({ trigger: 'poll_voted', appId: 'a', webhook: 'w', data });

describe('the request span and its metrics', () => {
  it('durations are in seconds, between the request’s start and its answer', async () => {
    const { otel, webhooks } = traced({ inbox: memoryInbox(), consume: false });
    const started = performance.now();
    const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
    await response.done;
    const elapsed = (performance.now() - started) / 1000;
    for (const name of ['http.server.request.duration', 'chat_webhooks.inbox.commit.duration']) {
      const [point] = await otel.points(name);
      expect(histogram(point).count, name).toBe(1);
      expect(histogram(point).sum, name).toBeGreaterThanOrEqual(0);
      expect(histogram(point).sum, name).toBeLessThanOrEqual(elapsed);
    }
  });

  it('a handler’s duration is in seconds too', async () => {
    const { otel, webhooks } = traced();
    webhooks.on('message_sent', () => new Promise((resolve) => setTimeout(resolve, 30)));
    const started = performance.now();
    const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
    await response.done;
    const elapsed = (performance.now() - started) / 1000;
    await waitFor(() => otel.spans().some((span) => span.name === 'handle message_sent'));
    const [point] = await otel.points('chat_webhooks.handler.duration');
    expect(point?.attributes).toEqual({ 'chat_webhooks.trigger': 'message_sent', 'chat_webhooks.outcome': 'success' });
    expect(histogram(point).sum).toBeGreaterThanOrEqual(0.025);
    expect(histogram(point).sum).toBeLessThanOrEqual(elapsed);
  });

  it('the scheme is the first of x-forwarded-proto, trimmed and in any case; without a route there is no http.route', async () => {
    const { otel, webhooks } = traced();
    for (const proto of [' HTTPS ,http', 'http, https']) {
      await webhooks.handle(buildRequest(createTestEvent('message_sent'), { headers: { 'x-forwarded-proto': proto } }));
    }
    await waitFor(() => servers(otel.spans()).length === 2);
    const [secure, plain] = servers(otel.spans());
    expect(secure?.attributes['url.scheme']).toBe('https');
    expect(plain?.attributes['url.scheme']).toBe('http');
    expect(secure?.name).toBe('POST');
    expect(Object.keys(secure?.attributes ?? {})).not.toContain('http.route');
    for (const point of await otel.points('http.server.request.duration')) expect(Object.keys(point.attributes)).not.toContain('http.route');
  });

  it('a 5xx makes the server span an error, a 4xx does not; an answer without a refusal code says its status', async () => {
    const { otel, webhooks } = traced();
    const lost = () => {
      throw new WebhookError('body_unavailable', 'lost');
    };
    expect((await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json' }, body: lost })).status).toBe(500);
    expect((await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })).status).toBe(400);
    await webhooks.close();
    expect((await webhooks.handle(buildRequest(createTestEvent('message_sent')))).status).toBe(503);
    await waitFor(() => servers(otel.spans()).length === 3);
    const [unavailable, invalid, closing] = servers(otel.spans());
    expect([unavailable?.status.code, unavailable?.attributes['error.type']]).toEqual([SpanStatusCode.ERROR, 'body_unavailable']);
    expect([invalid?.status.code, invalid?.attributes['error.type']]).toEqual([SpanStatusCode.UNSET, 'invalid_json']);
    expect([closing?.status.code, closing?.attributes['error.type']]).toEqual([SpanStatusCode.ERROR, '503']);
    expect(servers(otel.spans()).map((span) => span.attributes['http.response.status_code'])).toEqual([500, 400, 503]);
    const durations = await otel.points('http.server.request.duration');
    expect(durations.map((point) => [point.attributes['http.response.status_code'], point.attributes['error.type']])).toEqual([
      [500, 'body_unavailable'],
      [400, 'invalid_json'],
      [503, '503'],
    ]);
    const deliveries = await otel.points('chat_webhooks.deliveries');
    expect(deliveries.map((point) => point.attributes)).toEqual([
      { 'chat_webhooks.outcome': 'refused', 'chat_webhooks.reason': 'body_unavailable' },
      { 'chat_webhooks.outcome': 'refused', 'chat_webhooks.reason': 'invalid_json' },
      { 'chat_webhooks.outcome': 'refused', 'chat_webhooks.reason': '503' },
    ]);
  });

  it('an accepted delivery’s metrics carry no error.type or reason', async () => {
    const { otel, webhooks } = traced();
    await webhooks.handle(buildRequest(createTestEvent('message_sent')));
    expect((await otel.points('chat_webhooks.deliveries')).map((point) => point.attributes)).toEqual([
      { 'chat_webhooks.outcome': 'accepted', 'chat_webhooks.trigger': 'message_sent' },
    ]);
    const [duration] = await otel.points('http.server.request.duration');
    expect(duration?.attributes).toEqual({ 'http.request.method': 'POST', 'url.scheme': 'http', 'http.response.status_code': 200 });
  });

  it('the adapter’s route before openTelemetry’s; a method the conventions do not know is _OTHER, its span HTTP', () => {
    const otel = sdk({ route: '/configured' });
    closers.push(() => otel.shutdown());
    otel.telemetry.request('POST', () => undefined, '/given').answered(200, undefined);
    otel.telemetry.request('post', () => undefined, undefined).answered(200, undefined);
    otel.telemetry.request('PURGE', () => undefined, undefined).answered(405, 'method_not_allowed');
    expect(servers(otel.spans()).map((span) => [span.name, span.attributes['http.route'], span.attributes['http.request.method']])).toEqual([
      ['POST /given', '/given', 'POST'],
      ['POST /configured', '/configured', 'POST'],
      ['HTTP /configured', '/configured', '_OTHER'],
    ]);
  });

  it('a span already current is the parent, not the traceparent a proxy sent', async () => {
    const { otel, webhooks } = traced();
    const outer = trace.wrapSpanContext({ traceId: OUTER_TRACE_ID, spanId: OUTER_SPAN_ID, traceFlags: 1 });
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const answer = context.with(trace.setSpan(ROOT_CONTEXT, outer), () => webhooks.handle(buildRequest(createTestEvent('message_sent'), { headers: { traceparent } })));
    expect((await answer).status).toBe(200);
    await waitFor(() => servers(otel.spans()).length === 1);
    const [server] = servers(otel.spans());
    expect(server?.parentSpanContext?.spanId).toBe(OUTER_SPAN_ID);
    expect(server?.spanContext().traceId).toBe(OUTER_TRACE_ID);
  });
});

describe('what a span says of its event', () => {
  it('the conversation is the first non-empty string conversationId among the records; none, no attribute', async () => {
    const { otel, webhooks } = traced();
    webhooks.onUnknown(() => undefined);
    const bodies = [
      unknownEvent({ poll: { conversationId: 'c1' } }),
      unknownEvent({ gone: null, empty: { conversationId: '' }, number: { conversationId: 7 }, poll: { conversationId: 'c1' } }),
      unknownEvent({ poll: { conversationId: 'c2' } }),
      unknownEvent({ poll: { id: 'p' } }),
    ];
    for (const body of bodies) expect((await webhooks.handle({ method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
    await waitFor(() => servers(otel.spans()).length === bodies.length);
    const conversations = servers(otel.spans()).map((span) => span.attributes['messaging.message.conversation_id']);
    expect(conversations[0]).toMatch(/^[0-9a-f]{24}$/);
    expect(conversations[1]).toBe(conversations[0]);
    expect(conversations[2]).toMatch(/^[0-9a-f]{24}$/);
    expect(conversations[2]).not.toBe(conversations[0]);
    expect(conversations[3]).toBeUndefined();
    for (const span of servers(otel.spans()).slice(3)) expect(Object.keys(span.attributes)).not.toContain('messaging.message.conversation_id');
  });

  it('an event from a queue (webhooks.receive, not checked as a delivery is) with no object as data names no conversation', async () => {
    const { otel, webhooks } = traced();
    const seen: unknown[] = [];
    webhooks.onUnknown((event) => void seen.push(event.data));
    for (const data of [undefined, null, 'a string', 7]) {
      expect((await webhooks.receive({ trigger: 'poll_voted', data } as unknown as ParsedWebhook, { queue: 'jobs' })).ok).toBe(true);
    }
    expect(seen).toEqual([undefined, null, 'a string', 7]);
    const consumers = otel.spans().filter((span) => span.kind === SpanKind.CONSUMER);
    expect(consumers.map((span) => span.name)).toEqual(['process jobs', 'process jobs', 'process jobs', 'process jobs']);
    for (const span of consumers) expect(Object.keys(span.attributes)).not.toContain('messaging.message.conversation_id');
  });

  it('a recorded event is cut to 8 KiB', async () => {
    const { otel, webhooks } = traced({ maxBodyBytes: 64 * 1024 }, { recordBodies: true });
    const event = createTestEvent('message_sent', { data: { message: { data: { text: 'x'.repeat(20_000) } } } });
    await webhooks.handle(buildRequest(event));
    await waitFor(() => servers(otel.spans()).length === 1);
    const recorded = String(servers(otel.spans())[0]?.attributes['chat_webhooks.event']);
    expect(recorded).toBe(JSON.stringify(event).slice(0, 8192));
  });
});

describe('handlers run in the request', () => {
  it('run under their span; each failure code is counted alone, final (no retry follows), without an inbox', async () => {
    const { otel, webhooks } = traced({ handlerTimeoutMs: 20 });
    let active: unknown;
    webhooks.on('message_sent', () => {
      active = trace.getActiveSpan()?.spanContext().spanId;
      throw new Error('broke');
    });
    webhooks.on('message_sent', () => {
      throw new Error('broke too');
    });
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
    await response.done;
    await waitFor(() => otel.spans().some((span) => span.name === 'handle message_sent'));
    const handle = otel.spans().find((span) => span.name === 'handle message_sent');
    expect(active).toBe(handle?.spanContext().spanId);
    expect(handle?.attributes).toEqual({ 'chat_webhooks.trigger': 'message_sent', 'error.type': 'handler_failed' });
    expect(handle?.status).toEqual({ code: SpanStatusCode.ERROR, message: '3 handler(s) failed' });
    const failures = await otel.points('chat_webhooks.handler.failures');
    expect(failures.map(({ attributes, value }) => [attributes, value])).toEqual([
      [{ 'chat_webhooks.trigger': 'message_sent', 'error.type': 'handler_failed', 'chat_webhooks.final': true }, 2],
      [{ 'chat_webhooks.trigger': 'message_sent', 'error.type': 'handler_timeout', 'chat_webhooks.final': true }, 1],
    ]);
    const [duration] = await otel.points('chat_webhooks.handler.duration');
    expect(duration?.attributes).toEqual({ 'chat_webhooks.trigger': 'message_sent', 'chat_webhooks.outcome': 'failure' });
  });
});

describe('the inbox’s spans', () => {
  it('the producer and consumer spans carry the messaging attributes, the consumer the event’s and its link', async () => {
    const inbox = memoryInbox();
    const { otel, webhooks } = traced({ inbox, consume: false });
    const event = createTestEvent('message_sent', { data: { message: { conversationId: 'c1' } } });
    expect((await webhooks.handle(buildRequest(event))).status).toBe(200);
    expect((await webhooks.handle(buildRequest(event))).status).toBe(200);
    const worker = createWorker({ inbox, telemetry: otel.telemetry, logger: {} }).on('message_sent', () => undefined);
    closers.push(() => worker.close());
    worker.start();
    await waitFor(() => otel.spans().some((span) => span.kind === SpanKind.CONSUMER));
    const [server] = servers(otel.spans());
    const producers = otel.spans().filter((span) => span.kind === SpanKind.PRODUCER);
    const consumer = otel.spans().find((span) => span.kind === SpanKind.CONSUMER);
    const messaging = { 'messaging.system': 'chat_webhooks', 'messaging.destination.name': 'memory' };
    expect(producers.map((span) => [span.name, span.attributes])).toEqual([
      ['send memory', { ...messaging, 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'chat_webhooks.commit.outcome': 'stored' }],
      ['send memory', { ...messaging, 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'chat_webhooks.commit.outcome': 'duplicate' }],
    ]);
    expect(consumer?.name).toBe('process memory');
    expect(consumer?.attributes).toEqual({
      ...messaging,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'chat_webhooks.attempt': 1,
      'chat_webhooks.trigger': 'message_sent',
      'chat_webhooks.idempotency_key.digest': server?.attributes['chat_webhooks.idempotency_key.digest'],
      'messaging.message.conversation_id': server?.attributes['messaging.message.conversation_id'],
    });
    expect(consumer?.links.map((link) => link.context.spanId)).toEqual([producers[0]?.spanContext().spanId]);
    expect(consumer?.links[0]?.context.traceFlags).toBe(1);
    const deliveries = await otel.points('chat_webhooks.deliveries');
    expect(deliveries.map(({ attributes, value }) => [attributes['chat_webhooks.outcome'], value])).toEqual([
      ['accepted', 1],
      ['duplicate', 1],
    ]);
  });

  it('an attempt is a trace of its own even under a current span, and its handlers run under its span', async () => {
    const otel = sdk();
    closers.push(() => otel.shutdown());
    const outer = trace.wrapSpanContext({ traceId: OUTER_TRACE_ID, spanId: OUTER_SPAN_ID, traceFlags: 1 });
    const event = createTestEvent('message_sent');
    const attempt = context.with(trace.setSpan(ROOT_CONTEXT, outer), () => otel.telemetry.attempt('memory', attemptInfo(event, 'message_sent', 'k', 1, undefined)));
    const inside = attempt.run(() => trace.getActiveSpan()?.spanContext().spanId);
    attempt.end([], true);
    const consumer = otel.spans().find((span) => span.kind === SpanKind.CONSUMER);
    expect(consumer?.parentSpanContext).toBeUndefined();
    expect(consumer?.spanContext().traceId).not.toBe(OUTER_TRACE_ID);
    expect(consumer?.links).toEqual([]);
    expect(inside).toBe(consumer?.spanContext().spanId);
    expect(consumer?.status.code).toBe(SpanStatusCode.UNSET);
    expect(await otel.points('chat_webhooks.dead')).toEqual([]);
  });

  it('an event made dead is counted by inbox and trigger (an unknown one as _OTHER)', async () => {
    const otel = sdk();
    closers.push(() => otel.shutdown());
    const attempt = otel.telemetry.attempt('sqlite', attemptInfo(createTestEvent('message_sent'), 'message_sent', 'k', 3, undefined));
    attempt.end([{ code: 'handler_failed' }], true);
    otel.telemetry.dead('redis', 'brand_new_trigger');
    const dead = await otel.points('chat_webhooks.dead');
    expect(dead.map(({ attributes, value }) => [attributes, value])).toEqual([
      [{ 'chat_webhooks.inbox': 'sqlite', 'chat_webhooks.trigger': 'message_sent' }, 1],
      [{ 'chat_webhooks.inbox': 'redis', 'chat_webhooks.trigger': '_OTHER' }, 1],
    ]);
    const consumer = otel.spans().find((span) => span.kind === SpanKind.CONSUMER);
    expect(consumer?.status).toEqual({ code: SpanStatusCode.ERROR, message: '1 handler(s) failed' });
    const failures = await otel.points('chat_webhooks.handler.failures');
    expect(failures.map((point) => point.attributes)).toEqual([
      { 'chat_webhooks.trigger': 'message_sent', 'chat_webhooks.inbox': 'sqlite', 'error.type': 'handler_failed', 'chat_webhooks.final': true },
    ]);
  });

  it('a commit that fails is an error: its error’s name where it has its own, else inbox_failed', async () => {
    const failures: unknown[] = [new Error('disk full'), new TypeError('bad entry'), 'not an error'];
    const inbox = memoryInbox();
    inbox.put = () => Promise.reject(failures.shift());
    const { otel, webhooks } = traced({ inbox, consume: false });
    for (const id of ['1', '2', '3']) {
      const event = createTestEvent('message_sent', { data: { message: { id } } });
      expect((await webhooks.handle(buildRequest(event))).status).toBe(503);
    }
    const producers = otel.spans().filter((span) => span.kind === SpanKind.PRODUCER);
    expect(producers.map((span) => [span.status.code, span.attributes['error.type'], span.attributes['chat_webhooks.commit.outcome']])).toEqual([
      [SpanStatusCode.ERROR, 'inbox_failed', 'failed'],
      [SpanStatusCode.ERROR, 'TypeError', 'failed'],
      [SpanStatusCode.ERROR, 'inbox_failed', 'failed'],
    ]);
    const [commits] = await otel.points('chat_webhooks.inbox.commit.duration');
    expect(commits?.attributes).toEqual({ 'chat_webhooks.inbox': 'memory', 'chat_webhooks.outcome': 'failed' });
    expect(histogram(commits).count).toBe(3);
  });
});

describe('the inbox gauges', () => {
  /** An inbox as the gauges see it, counting how often it is read. */
  function observed(kind: string, stats: () => Promise<{ pending: number; running: number; dead: number }>, oldest?: () => Promise<number | undefined>) {
    const reads = { count: 0 };
    const inbox: ObservedInbox = {
      kind,
      stats: () => {
        reads.count++;
        return stats();
      },
      ...(oldest ? { oldestPendingAt: oldest } : {}),
    };
    return { inbox, reads };
  }
  const counts = async () => ({ pending: 4, running: 2, dead: 1 });

  it('read once per collection however often observed, until its last observer stops (stopping twice counts once)', async () => {
    const otel = sdk();
    closers.push(() => otel.shutdown());
    const { inbox, reads } = observed('custom', counts, async () => Date.now() - 2000);
    const stopReceiver = otel.telemetry.observe(inbox);
    const stopWorker = otel.telemetry.observe(inbox);
    const entries = await otel.points('chat_webhooks.inbox.entries');
    expect(reads.count).toBe(1);
    expect(entries.map(({ attributes, value }) => [attributes, value])).toEqual([
      [{ 'chat_webhooks.inbox': 'custom', 'chat_webhooks.inbox.state': 'pending' }, 4],
      [{ 'chat_webhooks.inbox': 'custom', 'chat_webhooks.inbox.state': 'running' }, 2],
      [{ 'chat_webhooks.inbox': 'custom', 'chat_webhooks.inbox.state': 'dead' }, 1],
    ]);
    const [age] = await otel.points('chat_webhooks.inbox.oldest_pending_age');
    expect(age?.attributes).toEqual({ 'chat_webhooks.inbox': 'custom' });
    expect(age?.value).toBeGreaterThanOrEqual(1.9);
    expect(age?.value).toBeLessThan(10);

    stopReceiver();
    stopReceiver();
    reads.count = 0;
    await otel.points('chat_webhooks.inbox.entries');
    expect(reads.count).toBe(1);
    stopWorker();
    await otel.points('chat_webhooks.inbox.entries');
    expect(reads.count).toBe(1);
  });

  it('an inbox that cannot answer is left out, the others still reported; one that cannot tell its oldest entry has no age', async () => {
    const otel = sdk();
    closers.push(() => otel.shutdown());
    otel.telemetry.observe(observed('down', () => Promise.reject(new Error('connection refused')), async () => 0).inbox);
    otel.telemetry.observe(observed('ageless', counts).inbox);
    otel.telemetry.observe(observed('ahead', counts, async () => Date.now() + 60_000).inbox);
    otel.telemetry.observe(observed('empty', counts, async () => undefined).inbox);
    const entries = await otel.points('chat_webhooks.inbox.entries');
    expect([...new Set(entries.map((point) => point.attributes['chat_webhooks.inbox']))]).toEqual(['ageless', 'ahead', 'empty']);
    const ages = await otel.points('chat_webhooks.inbox.oldest_pending_age');
    // A clock behind the inbox's reads as no age, never a negative one; no pending entry, no age either.
    expect(ages.map(({ attributes, value }) => [attributes, value])).toEqual([
      [{ 'chat_webhooks.inbox': 'ahead' }, 0],
      [{ 'chat_webhooks.inbox': 'empty' }, 0],
    ]);
    expect(valueOf(entries, { 'chat_webhooks.inbox': 'ageless', 'chat_webhooks.inbox.state': 'running' })).toBe(2);
  });
});

describe('the instruments', () => {
  it('are named, described and measured as the conventions say; durations in the conventions’ buckets', async () => {
    const exporter = new InMemorySpanExporter();
    const reader = new PullReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const telemetry = openTelemetry({ tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }), meterProvider });
    closers.push(() => meterProvider.shutdown());
    // Every instrument once, through the hooks the receiver and the worker call.
    const request = telemetry.request('POST', () => undefined, '/webhooks');
    request.commit('memory').end('stored');
    request.answered(200, undefined);
    const attempt = telemetry.attempt('memory', attemptInfo(createTestEvent('message_sent'), 'message_sent', 'k', 1, undefined));
    attempt.end([{ code: 'handler_failed' }], true);
    telemetry.observe({ kind: 'memory', stats: async () => ({ pending: 0, running: 0, dead: 1 }), oldestPendingAt: async () => undefined });
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    expect(resourceMetrics.scopeMetrics.map((scope) => [scope.scope.name, scope.scope.version])).toEqual([['chat-webhooks', '0.1.0']]);
    expect(Object.fromEntries(metrics.map(({ descriptor }) => [descriptor.name, [descriptor.unit, descriptor.description]]))).toEqual({
      'http.server.request.duration': ['s', 'Duration of webhook requests, from arrival to the answer.'],
      'chat_webhooks.deliveries': ['{delivery}', 'Deliveries answered, by outcome (accepted, duplicate, refused) and, for refusals, reason.'],
      'chat_webhooks.handler.duration': ['s', "Duration of one run of an event's handlers."],
      'chat_webhooks.handler.failures': ['{failure}', 'Handler failures, by trigger, error.type, and whether no retry follows (final).'],
      'chat_webhooks.dead': ['{event}', 'Events made dead after their last attempt.'],
      'chat_webhooks.inbox.commit.duration': ['s', 'Duration of storing a delivery in the inbox.'],
      'chat_webhooks.inbox.entries': ['{entry}', 'Entries in the inbox, by state (pending, running, dead).'],
      'chat_webhooks.inbox.oldest_pending_age': ['s', 'How long ago the oldest pending entry was received.'],
    });
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
    for (const metric of metrics.filter(({ descriptor }) => descriptor.unit === 's' && !descriptor.name.includes('age'))) {
      expect((metric.dataPoints[0]?.value as Histogram).buckets.boundaries, metric.descriptor.name).toEqual(buckets);
    }
    expect(exporter.getFinishedSpans().map((span) => span.instrumentationScope.name)).toEqual(['chat-webhooks', 'chat-webhooks', 'chat-webhooks']);
  });
});
