/** The summary of a run of deliveries: how many, which statuses, latency percentiles. */
import type { DeliveryResult } from './post.js';

export interface RunSummary {
  count: number;
  ok: number;
  failed: number;
  /** How many answers had each status; `error` counts deliveries that got no answer. */
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  elapsedMs: number;
  perSecond: number;
}

/** The nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

export const isSuccess = (result: DeliveryResult) => result.status !== undefined && result.status >= 200 && result.status < 300;

export function summarize(results: readonly DeliveryResult[], elapsedMs: number): RunSummary {
  const statuses: Record<string, number> = {};
  for (const result of results) {
    const name = result.status === undefined ? 'error' : String(result.status);
    statuses[name] = (statuses[name] ?? 0) + 1;
  }
  const latencies = results.map((result) => result.ms).sort((a, b) => a - b);
  const ok = results.filter(isSuccess).length;
  return {
    count: results.length,
    ok,
    failed: results.length - ok,
    statuses,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(latencies[latencies.length - 1] ?? 0),
    elapsedMs: round(elapsedMs),
    perSecond: elapsedMs > 0 ? Math.round((results.length / elapsedMs) * 1000) : 0,
  };
}
