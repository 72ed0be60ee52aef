// A worker in a process of its own, for the telemetry test across two processes: run from the built package,
// with the real SDK; each finished span is printed as one JSON line, and "ready" once the worker runs.
//   REDIS_URL=<url> PREFIX=<prefix>
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

const { createWorker } = await import('../../dist/src/index.js');
const { redisInbox } = await import('../../dist/src/stores/redis/index.js');
const { openTelemetry } = await import('../../dist/src/telemetry/otel/index.js');

const printer = {
  onStart() {},
  onEnd(span) {
    const { traceId, spanId } = span.spanContext();
    const links = span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId }));
    console.log(JSON.stringify({ span: span.name, kind: SpanKind[span.kind], traceId, spanId, links, attributes: span.attributes }));
  },
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};
const tracerProvider = new BasicTracerProvider({ spanProcessors: [printer] });
const inbox = redisInbox({ url: process.env.REDIS_URL, prefix: process.env.PREFIX, pollMs: 10 });
const worker = createWorker({ inbox, telemetry: openTelemetry({ tracerProvider }), logger: {} });
worker.on('message_sent', () => undefined).start();
process.on('SIGTERM', () => worker.close().then(() => inbox.close()).then(() => process.exit(0)));
console.log('ready');
