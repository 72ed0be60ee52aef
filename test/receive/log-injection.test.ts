/**
 * Sender-chosen text (record keys, unknown trigger names, header values) must not forge log lines or
 * terminal escapes in the default console logger, and a 400 in `reject` mode must not echo sender keys.
 */
import { format } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWebhooks } from '../../src/index.js';
import { consoleLogger } from '../../src/dispatch/logger.js';

const fixture = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const request = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
const EVIL = 'k\n[chat-webhooks] forged line\u001b[2J\r\u009b31m\u2028';

/** Everything the console would print, as one string per call. */
function captureConsole() {
  const lines: string[] = [];
  for (const method of ['warn', 'error', 'log', 'info', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(format(...args)));
  }
  return lines;
}
afterEach(() => vi.restoreAllMocks());

/** A message_sent whose mentions hold an invalid user under a sender-chosen key. */
function withEvilMention(): string {
  const event = JSON.parse(fixture);
  event.data.message.data.mentions = { [EVIL]: { uid: 42 } };
  return JSON.stringify(event);
}

const RAW = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/;

describe('the default console logger', () => {
  it('escapes control characters in an unknown trigger name', async () => {
    const lines = captureConsole();
    const webhooks = createWebhooks({ auth: false, dedupe: false });
    const response = await webhooks.handle(request(JSON.stringify({ trigger: EVIL, data: {} })));
    await response.done;
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(RAW);
    expect(lines.join('')).toContain('\\n[chat-webhooks] forged line');
  });

  it('escapes control characters in record keys reported without an onError handler', async () => {
    const lines = captureConsole();
    const webhooks = createWebhooks({ auth: false, dedupe: false });
    const response = await webhooks.handle(request(withEvilMention()));
    await response.done;
    expect(lines.length).toBe(1);
    expect(lines[0]).not.toMatch(RAW);
    expect(lines[0]).toContain('invalid_payload');
  });

  it('escapes fields and messages given to it directly, and survives fields JSON cannot write', () => {
    const lines = captureConsole();
    consoleLogger.warn?.({ reason: EVIL }, `message ${EVIL}`);
    consoleLogger.error?.({ big: 1n, [EVIL]: 1 }, 'bigint');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toMatch(RAW);
  });
});

describe("invalidPayload: 'reject'", () => {
  it('the 400 names the trigger but echoes no sender key; onError still gets the paths', async () => {
    const webhooks = createWebhooks({ auth: false, invalidPayload: 'reject', logger: {} });
    const paths: string[] = [];
    webhooks.onError((error) => void paths.push(...(error.issues ?? []).map((issue) => issue.path.join('.'))));
    const response = await webhooks.handle(request(withEvilMention()));
    expect(response.status).toBe(400);
    expect(response.body).toContain('message_sent');
    expect(response.body).not.toContain('forged');
    expect(response.body).not.toMatch(RAW);
    await response.done;
    expect(paths.some((path) => path.includes(EVIL))).toBe(true);
  });
});
