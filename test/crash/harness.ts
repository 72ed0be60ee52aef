/**
 * What the crash tests share: starting a receiver or worker process (test/crash/process.mjs) and waiting for
 * it, senders that re-send what was not answered 200, and the tally of a run from the HANDLED file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('process.mjs', import.meta.url));
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Proc {
  child: ChildProcess;
  killed: Promise<void>;
}

/** Starts one process of the run and resolves once it printed "ready". */
export async function start(env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${env.ROLE} did not start:\n${output}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${env.ROLE} exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, killed };
}

export async function kill(proc: Proc, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
  await proc.killed;
}

/** 5 000 distinct message_sent bodies (ids 0..4999), then 500 repeats of the first 500, mixed in. */
export function deliveries(distinct = 5000, repeats = 500): Array<{ id: number; body: string }> {
  const body = (id: number) =>
    JSON.stringify({ trigger: 'message_sent', appId: 'app', webhook: 'wh_crash', data: { message: { id: String(id), conversationId: 'c', sender: 'u1', receiver: 'u2', receiverType: 'user', type: 'text', category: 'message', data: { text: `message ${id}` }, sentAt: 1763700000 } } });
  const list = Array.from({ length: distinct }, (_, id) => ({ id, body: body(id) }));
  // Each repeat goes in some distance after its original: a resend while it may still be in flight.
  for (let id = repeats - 1; id >= 0; id--) list.splice(Math.min(list.length, id * 10 + 1 + (id % 7)), 0, { id, body: body(id) });
  return list;
}

export interface SendStats {
  /** Ids answered 200 at least once. */
  acked: Set<number>;
  /** Deliveries answered 200 (repeats included). */
  answered: number;
  /** Answers other than 200 and failed connections, each re-sent. */
  resent: number;
}

/**
 * Sends every delivery from `concurrency` senders until each was answered 200; anything else (a 503, a
 * refused or cut connection) is sent again after a short pause, to whichever receiver `target` names then.
 */
export async function sendAll(
  list: Array<{ id: number; body: string }>,
  target: (attempt: number) => string,
  onAnswered: (stats: SendStats) => void,
  concurrency = 50,
): Promise<SendStats> {
  const stats: SendStats = { acked: new Set(), answered: 0, resent: 0 };
  let next = 0;
  async function sender(): Promise<void> {
    while (next < list.length) {
      const delivery = list[next++]!;
      for (let attempt = 0; ; attempt++) {
        const status = await fetch(target(attempt), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: delivery.body,
        }).then(
          async (response) => {
            await response.arrayBuffer();
            return response.status;
          },
          () => 0,
        );
        if (status === 200) break;
        stats.resent += 1;
        await sleep(Math.min(500, 20 * (attempt + 1)));
      }
      stats.acked.add(delivery.id);
      stats.answered += 1;
      onAnswered(stats);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, sender));
  return stats;
}

/** How often each id's handler completed, from the HANDLED file ("<id> <attempt>" lines). */
export function handledCounts(file: string): Map<number, number> {
  const counts = new Map<number, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const id = Number(line.split(' ')[0]);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Completions on an attempt after the first: events whose earlier attempt was cut off by a kill. */
export function laterAttempts(file: string): number {
  if (!existsSync(file)) return 0;
  return readFileSync(file, 'utf8').split('\n').filter((line) => Number(line.split(' ')[1]) > 1).length;
}

/** Waits until every id in `expected` was handled (or the deadline), then a little longer for late re-runs. */
export async function untilHandled(file: string, expected: number, ms: number): Promise<Map<number, number>> {
  const deadline = Date.now() + ms;
  while (handledCounts(file).size < expected && Date.now() < deadline) await sleep(50);
  await sleep(300);
  return handledCounts(file);
}

export interface Tally {
  acknowledged: number;
  handled: number;
  lost: number;
  reRun: number;
  /** Handled on attempt 2 or later: their first attempt was cut off by a kill and the lease ran out. */
  afterLostLease: number;
  resent: number;
}

export function tally(stats: SendStats, counts: Map<number, number>, file: string): Tally {
  let lost = 0;
  for (const id of stats.acked) if (!counts.has(id)) lost += 1;
  let reRun = 0;
  for (const count of counts.values()) reRun += count - 1;
  return { acknowledged: stats.acked.size, handled: counts.size, lost, reRun, afterLostLease: laterAttempts(file), resent: stats.resent };
}
