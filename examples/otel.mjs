// Observability: a receiver with a SQLite inbox and its worker, instrumented with the OpenTelemetry SDK.
// Metrics are served to Prometheus at http://127.0.0.1:9464/metrics; spans are printed on the console.
// Run: npm run build && node examples/otel.mjs   (PORT, PROMETHEUS_PORT, DATA_DIR to change defaults)
// Then: curl -u demo:demo-password -H 'content-type: application/json' \
//         -d '{"trigger":"message_sent","data":{"message":{"id":"1","conversationId":"alice_user_bob","sender":"alice","receiver":"bob","receiverType":"user","category":"message","type":"text","data":{"text":"Hello from curl"},"sentAt":1763700000}}}' \
//         http://127.0.0.1:3000/webhooks
//       curl http://127.0.0.1:9464/metrics
import { createServer } from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createWebhooks } from 'chat-webhooks';
import { nodeMiddleware } from 'chat-webhooks/node';
import { openTelemetry } from 'chat-webhooks/otel';
import { sqliteInbox } from 'chat-webhooks/sqlite';

const port = Number(process.env.PORT ?? 3000);
const prometheusPort = Number(process.env.PROMETHEUS_PORT ?? 9464);
const dataDir = process.env.DATA_DIR ?? './.data';

// The exporter serves /metrics on its own port; each scrape collects (and reads the inbox gauges) once.
const prometheus = new PrometheusExporter({ port: prometheusPort, host: '127.0.0.1' }, () =>
  console.log(`metrics on http://127.0.0.1:${prometheusPort}/metrics`),
);
const meterProvider = new MeterProvider({ readers: [prometheus] });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
const telemetry = openTelemetry({ tracerProvider, meterProvider });

const inbox = sqliteInbox({ path: `${dataDir}/otel-inbox.db` });
const webhooks = createWebhooks({ auth: { username: 'demo', password: 'demo-password' }, inbox, telemetry });
webhooks.onAny((event, { attempt }) => console.log(`handled ${event.trigger} (attempt ${attempt})`));

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
