/**
 * Sends a series of deliveries (for `send` and `replay`): C at a time, optionally paced to N a second,
 * one line per delivery with its status and latency, and for more than one a progress bar and a summary.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { escapeControl as safe } from '../index.js';
import { performance } from 'node:perf_hooks';
import { isTerminal, type Output } from './output.js';
import { deliver, type DeliveryResult, type DeliveryTarget } from './post.js';
import { ProgressBar } from './progress.js';
import { isSuccess, summarize, type RunSummary } from './stats.js';

export interface Outgoing {
  /** Text, or bytes sent exactly as they are (`send --raw`). */
  body: string | Uint8Array<ArrayBuffer>;
  /** What the delivery is, for its line: the trigger, say. */
  label: string;
}

export interface RunOptions {
  target: DeliveryTarget;
  total: number;
  concurrency: number;
  /** Deliveries started per second at most. */
  rate?: number | undefined;
  /** Force the progress bar on or off; by default it shows on a terminal when there is more than one. */
  progress?: boolean | undefined;
  /** Only the summary (printed even for one delivery): no line per delivery. */
  quiet?: boolean;
  output: Output;
}

function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

function printResult(output: Output, index: number, item: Outgoing, result: DeliveryResult): void {
  const { color } = output;
  output.record({ n: index + 1, label: item.label, ...result, ms: Math.round(result.ms * 10) / 10 });
  const status = result.status === undefined ? color.red('ERR') : isSuccess(result) ? color.green(String(result.status)) : color.red(String(result.status));
  // The label is a trigger from a capture (`replay`), the answer the target's: either may hold escape sequences.
  const detail = result.error ?? result.answer;
  const tail = detail ? `  ${color.red(safe(detail.replace(/\s+/g, ' ')))}` : '';
  output.line(`${status}  ${formatMs(result.ms).padStart(8)}  #${index + 1} ${safe(item.label)}${tail}`);
}

export function printSummary(output: Output, summary: RunSummary): void {
  output.record({ summary });
  const { color } = output;
  const statuses = Object.entries(summary.statuses)
    .map(([status, n]) => {
      const text = `${n} × ${status}`;
      return status.startsWith('2') ? color.green(text) : color.red(text);
    })
    .join(', ');
  output.line(
    `${color.bold(`${summary.count} sent`)}: ${statuses} · p50 ${formatMs(summary.p50Ms)} · p99 ${formatMs(summary.p99Ms)}` +
      ` · max ${formatMs(summary.maxMs)} · ${(summary.elapsedMs / 1000).toFixed(2)} s (${summary.perSecond}/s)`,
  );
}

export async function runDeliveries(items: Iterable<Outgoing>, options: RunOptions): Promise<RunSummary> {
  const { output, total } = options;
  const showBar = total > 1 && (options.progress ?? isTerminal(output.err));
  const bar = showBar ? new ProgressBar(output.err, total, output.errColor) : undefined;
  const iterator = items[Symbol.iterator]();
  const results: DeliveryResult[] = [];
  const started = performance.now();
  const interval = options.rate ? 1000 / options.rate : 0;
  let next = 0;

  async function worker(): Promise<void> {
    for (;;) {
      const step = iterator.next();
      if (step.done) return;
      const index = next++;
      // Pacing by start time: delivery i starts no earlier than i / rate seconds into the run.
      const wait = started + index * interval - performance.now();
      if (wait > 0) await sleep(wait);
      const result = await deliver(step.value.body, options.target);
      results.push(result);
      const print = () => (options.quiet ? undefined : printResult(output, index, step.value, result));
      if (bar) {
        bar.above(print);
        bar.tick(isSuccess(result));
      } else {
        print();
      }
    }
  }

  bar?.draw();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, total)) }, worker));
  bar?.finish();
  const summary = summarize(results, performance.now() - started);
  if (total > 1 || options.quiet) printSummary(output, summary);
  return summary;
}
