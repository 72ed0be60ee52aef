/**
 * Reconcile runs on OpenTelemetry: one INTERNAL span `reconcile` per run (its window at the start, its figures
 * at the end, an error status when it stopped on one) and the counter `chat_webhooks.reconciled` by outcome
 * (`recovered`, `duplicate`, `skipped`), added as the run goes so a long run shows on a dashboard before it ends.
 */
import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { Counter, Meter, Tracer } from '@opentelemetry/api';
import type { ReconcileInfo, ReconcileTelemetry } from '../hooks.js';

/** `api`: the enums of the peer otel.ts loaded (only it loads the peer, so that its absence is said in one sentence). */
export function reconcileRuns(
  api: Pick<typeof OpenTelemetryApi, 'SpanKind' | 'SpanStatusCode'>,
  tracer: Tracer,
  meter: Meter,
): (info: ReconcileInfo) => ReconcileTelemetry {
  const { SpanKind, SpanStatusCode } = api;
  let reconciled: Counter | undefined;
  return (info) => {
    reconciled ??= meter.createCounter('chat_webhooks.reconciled', {
      unit: '{event}',
      description: 'Events a reconcile run went through, by outcome (recovered, duplicate, skipped).',
    });
    const counter = reconciled;
    const span = tracer.startSpan('reconcile', {
      kind: SpanKind.INTERNAL,
      attributes: {
        'chat_webhooks.reconcile.since': new Date(info.since).toISOString(),
        'chat_webhooks.reconcile.until': new Date(info.until).toISOString(),
        'chat_webhooks.app_id': info.appId,
        'chat_webhooks.webhook': info.webhook,
      },
    });
    return {
      counted: (outcome, count) => {
        if (count > 0) counter.add(count, { 'chat_webhooks.reconcile.outcome': outcome, 'chat_webhooks.webhook': info.webhook });
      },
      end: (figures, error) => {
        for (const [name, value] of Object.entries(figures)) span.setAttribute(`chat_webhooks.reconcile.${name}`, value);
        if (error !== undefined) {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        }
        span.end();
      },
    };
  };
}
