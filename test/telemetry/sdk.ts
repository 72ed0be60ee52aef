/**
 * The real OpenTelemetry SDK for the telemetry tests: spans in its in-memory exporter, metrics read on demand
 * by a pull reader (as a Prometheus scrape would).
 */
import type { Attributes } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { openTelemetry, type OpenTelemetryOptions } from '../../src/telemetry/otel/index.js';

class PullReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

export interface Point {
  attributes: Attributes;
  value: number | Histogram;
}

export function sdk(options: Omit<OpenTelemetryOptions, 'tracerProvider' | 'meterProvider'> = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new PullReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const telemetry = openTelemetry({ tracerProvider, meterProvider, ...options });
  return {
    telemetry,
    exporter,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** The data points of one instrument, read now. */
    async points(name: string): Promise<Point[]> {
      const { resourceMetrics } = await reader.collect();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name === name) return (metric.dataPoints as DataPoint<number | Histogram>[]).map(({ attributes, value }) => ({ attributes, value }));
        }
      }
      return [];
    },
    async shutdown(): Promise<void> {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The value of the point whose attributes include all of `match` (a counter's count, a histogram's count). */
export function valueOf(points: Point[], match: Attributes): number | undefined {
  const point = points.find((p) => Object.entries(match).every(([key, value]) => p.attributes[key] === value));
  if (!point) return undefined;
  return typeof point.value === 'number' ? point.value : point.value.count;
}

export const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
