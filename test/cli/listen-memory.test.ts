/**
 * `listen` left running with live pages that stopped reading: the built CLI as a child process, ten `/events`
 * subscribers over real sockets that never read, sixty deliveries of 900 KB. Its peak resident memory (VmHWM
 * of /proc/<pid>/status) stays under 200 MB, and a subscriber that resumes reading gets the newest delivery.
 * Before the feed honoured backpressure and bounded its history in bytes, this took the CLI to ~1.3 GB.
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Listener } from './run-cli.js';

const DELIVERIES = 60;
const BODY_BYTES = 900_000;
const LIMIT_MB = 200;

/** A kernel figure of the child's /proc/<pid>/status, in MB. */
function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) / 1024;
}

/** Opens `GET /events` over a raw socket and stops reading at once: a page whose tab is frozen. */
function pausedSubscriber(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

function bigDelivery(n: number): string {
  return JSON.stringify({ trigger: 'load_test', data: { n, pad: 'x'.repeat(BODY_BYTES) } });
}

async function deliver(url: string, from: number, to: number): Promise<void> {
  for (let n = from; n < to; n += 4) {
    const batch = [n, n + 1, n + 2, n + 3].filter((i) => i < to);
    const answers = await Promise.all(
      batch.map((i) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bigDelivery(i) })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(batch.map(() => 200));
  }
}

/** Reads a socket until `pattern` shows in what it sent; resolves with the text's tail and the SSE event names seen. */
function readUntil(socket: Socket, pattern: RegExp, timeoutMs = 20_000): Promise<{ text: string; events: Set<string> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const events = new Set<string>();
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${text.length} characters`)), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      // Keep only the tail: the payloads are large and only the ids and event names matter.
      text = (text + chunk).slice(-2_000_000);
      for (const [, name] of text.matchAll(/\nevent: (\w+)\n/g)) events.add(name as string);
      if (pattern.test(text)) {
        clearTimeout(timer);
        resolve({ text, events });
      }
    });
    socket.resume();
  });
}

// The figures come from Linux's /proc.
describe.skipIf(!existsSync('/proc/self/status'))('listen with subscribers that do not read', () => {
  let listener: Listener;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    assertBuilt();
    listener = await Listener.startPlain();
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await listener?.stop();
  });

  it(`stays under ${LIMIT_MB} MB with 10 paused /events clients and ${DELIVERIES} deliveries of 900 KB`, async () => {
    const pid = listener.child.pid as number;
    const before = procMb(pid, 'VmRSS');
    for (let i = 0; i < 5; i++) sockets.push(await pausedSubscriber(listener.port));
    await deliver(listener.url, 0, DELIVERIES / 2);
    // Five more arrive late: each is offered the history at once.
    for (let i = 0; i < 5; i++) sockets.push(await pausedSubscriber(listener.port));
    await deliver(listener.url, DELIVERIES / 2, DELIVERIES);
    await expect.poll(() => (listener.text.match(/ 200 load_test /g) ?? []).length, { timeout: 20_000 }).toBe(DELIVERIES);
    const peak = procMb(pid, 'VmHWM');
    const after = procMb(pid, 'VmRSS');
    console.log(`listen RSS: ${before.toFixed(0)} MB at start, ${after.toFixed(0)} MB after, peak ${peak.toFixed(0)} MB`);
    expect(peak).toBeLessThan(LIMIT_MB);

    // A paused page that wakes up is not stuck: it is brought to the newest delivery.
    const woken = sockets[0] as Socket;
    const { text, events } = await readUntil(woken, new RegExp(`\\nid: [0-9a-f]+\\.${DELIVERIES}\\n`));
    expect(text).toContain('load_test');
    // ...and told that it missed some: the history kept only the newest.
    expect([...events].sort()).toEqual(['delivery', 'hello', 'skipped']);
  }, 120_000);
});
