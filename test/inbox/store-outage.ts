/**
 * One store outage as a worker lives it, for every store: a worker handles an event, the store goes away for
 * a while, comes back, and the worker handles the next one. What it must have said meanwhile (issue 38,
 * item 5): one warning when the store went, one line when it came back, nothing in between, and `health()`
 * failing for the length of it.
 */
import { expect } from 'vitest';
import { createWorker, type Inbox, type WebhookLogger, type Worker } from '../../src/index.js';
import { entry } from './contract.js';

export interface Logged {
  level: 'warn' | 'error' | 'info';
  message: string;
  fields: Record<string, unknown>;
}

export interface OutageScenario {
  /** The inbox the worker claims from (the test's puts go through `putter`, which may be another connection). */
  inbox: Inbox;
  putter?: Inbox;
  /** Makes the store go away; resolves once it has. */
  breakStore(): Promise<void>;
  restoreStore(): Promise<void>;
  /** How long the store stays away. */
  downMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(50);
  }
}

/** Runs the outage; resolves with every line the worker logged, for the caller's own checks. */
export async function runOutage({ inbox, putter = inbox, breakStore, restoreStore, downMs }: OutageScenario): Promise<Logged[]> {
  const lines: Logged[] = [];
  const record = (level: Logged['level']) => (fields: Record<string, unknown>, message?: string) => void lines.push({ level, fields, message: message ?? '' });
  const logger: WebhookLogger = { info: record('info'), warn: record('warn'), error: record('error') };
  const handled: string[] = [];
  const worker: Worker = createWorker({ inbox, concurrency: 4, logger, closeInbox: false }).onAny((_event, { key }) => void handled.push(key));
  worker.start();
  try {
    await putter.put(entry('before'));
    await until('the first event handled', () => handled.includes('before'), 5000);

    await breakStore();
    await until('health() failing', async () => (await worker.health()).inbox === 'failing', 3000);
    await sleep(downMs);
    const during = await worker.health();
    expect(during).toMatchObject({ ok: false, inbox: 'failing' });
    const warned = lines.filter((line) => line.level !== 'info');
    expect(warned, JSON.stringify(lines)).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 'warn', fields: { inbox: inbox.kind } });
    expect(warned[0]!.message).toMatch(new RegExp(`^The ${inbox.kind} inbox is not answering`));

    await restoreStore();
    await until('the recovery line', () => lines.some((line) => /answers again/.test(line.message)), 12_000);
    await putter.put(entry('after'));
    await until('the event put after the outage handled', () => handled.includes('after'), 8000);
    await until('health() ok', async () => (await worker.health()).ok, 3000);
    expect(lines, JSON.stringify(lines)).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 'warn', fields: { inbox: inbox.kind } });
    expect(lines[1]!.message).toMatch(new RegExp(`^The ${inbox.kind} inbox answers again after \\d+(\\.\\d)? s`));
    return lines;
  } finally {
    await worker.close();
  }
}
