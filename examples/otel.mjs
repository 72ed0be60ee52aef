// Observability: a receiver with a SQLite inbox and its worker, instrumented with the OpenTelemetry SDK.
// Metrics are served to Prometheus at http://127.0.0.1:9464/metrics; spans are printed on the console.
// Run: npm run build && node examples/otel.mjs   (PORT, PROMETHEUS_PORT, DATA_DIR, ATTEMPTS to change defaults;
//      CHAT_API_KEY with CHAT_APP_ID, CHAT_REGION and CHAT_WEBHOOK turns catch-up on, counted in chat_webhooks.reconciled)
// Alert rules and a Grafana dashboard for these metrics: examples/observability/ (docs/operations.md).
// Then: curl -u demo:demo-password -H 'content-type: application/json' \
//         -d '{"trigger":"message_sent","data":{"message":{"id":"1","conversationId":"alice_user_bob","sender":"alice","receiver":"bob","receiverType":"user","category":"message","type":"text","data":{"text":"Hello from curl"},"sentAt":1763700000}}}' \
//         http://127.0.0.1:3000/webhooks
//       curl http://127.0.0.1:9464/metrics
import { createServer } from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createWebhooks } from 'chat-webhooks';
import { createChatClient } from 'chat-webhooks/api';
import { nodeMiddleware } from 'chat-webhooks/node';
import { openTelemetry } from 'chat-webhooks/otel';
import { sqliteInbox } from 'chat-webhooks/sqlite';

const port = Number(process.env.PORT ?? 3000);
const prometheusPort = Number(process.env.PROMETHEUS_PORT ?? 9464);
const dataDir = process.env.DATA_DIR ?? './.data';
// How many times the worker runs an event's handlers before the event is dead (the worker's default is 5).
const attempts = Number(process.env.ATTEMPTS ?? 5);

// The exporter serves /metrics on its own port; each scrape collects (and reads the inbox gauges) once.
const prometheus = new PrometheusExporter({ port: prometheusPort, host: '127.0.0.1' }, () =>
  console.log(`metrics on http://127.0.0.1:${prometheusPort}/metrics`),
);
const meterProvider = new MeterProvider({ readers: [prometheus] });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
const telemetry = openTelemetry({ tracerProvider, meterProvider });

// With the platform's REST key, the receiver recovers on start what an outage lost (docs/reconcile.md).
// CHAT_API_BASE_URL points the client elsewhere than the platform (a local stand-in, in this example's test).
const { CHAT_API_KEY: apiKey, CHAT_APP_ID: appId, CHAT_REGION: region, CHAT_WEBHOOK: webhook, CHAT_API_BASE_URL: baseUrl } = process.env;
const chat = apiKey && appId && region && webhook ? createChatClient(baseUrl ? { baseUrl, apiKey } : { appId, region, apiKey }) : undefined;

const inbox = sqliteInbox({ path: `${dataDir}/otel-inbox.db` });
const webhooks = createWebhooks({
  auth: { username: 'demo', password: 'demo-password' },
  inbox,
  telemetry,
  ...(chat && { catchUp: { chat, webhook, appId, region } }),
  worker: { retry: { attempts, minDelayMs: 200, maxDelayMs: 2000 } },
});
webhooks.onAny((event, { attempt }) => {
  // A message whose text is "fail" fails every time: the failure and dead-event panels have something to show.
  if (event.data?.message?.data?.text === 'fail') throw new Error('this event always fails');
  console.log(`handled ${event.trigger} (attempt ${attempt})`);
});

// health() is no metric of the toolkit: exported here as a gauge (1 ready, 0 not), so that an alert can watch
// it the way a load balancer watches /ready below.
meterProvider
  .getMeter('chat-webhooks-example')
  .createObservableGauge('chat_webhooks.ready', { description: 'Whether webhooks.health() is ok (1) or not (0).' })
  .addCallback(async (result) => result.observe((await webhooks.health()).ok ? 1 : 0));

// A readiness probe: 200 while the receiver takes deliveries, 503 (with the reason) when it cannot.
const server = createServer((req, res) => {
  if (req.url !== '/ready') return handle(req, res);
  webhooks.health().then((health) => {
    res.writeHead(health.ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify(health));
  });
});
const handle = nodeMiddleware(webhooks, { path: '/webhooks' });
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/webhooks`));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    await webhooks.close();
    await inbox.close();
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    process.exit(0);
  });
}
