/**
 * `chat-webhooks reconcile` (issue 35, item 4), the built CLI as a child process against the local platform:
 * what an outage lost goes into the app's SQLite inbox for its workers, what the inbox holds is a duplicate,
 * `--dry-run` lists and writes nothing, the key is read from CHAT_API_KEY only, a progress line on a terminal,
 * exit codes 0, 1 (the platform refused) and 2 (usage).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhooks } from '../../src/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { messageStream, startChatPlatform, type ChatPlatform, type StreamEvent } from '../support/chat-platform.js';
import { assertBuilt, runCli, runInTerminal } from './run-cli.js';

const auth = { username: 'platform', password: 's3cret' };
const parts = { appId: 'app1', region: 'eu', webhook: 'wh_main' };
/** In the past, so `--until` may be left to default to now. */
const START = 1_780_000_000;
const iso = (second: number) => new Date(second * 1000).toISOString();
const windowArgs = ['--since', iso(START), '--until', iso(START + 300), '--app-id', parts.appId, '--region', parts.region, '--webhook', parts.webhook];

let platform: ChatPlatform;
let events: StreamEvent[];
const dir = mkdtempSync(join(tmpdir(), 'cli-reconcile-'));
const path = join(dir, 'inbox.sqlite');

beforeAll(async () => {
  assertBuilt();
  const stream = messageStream({ start: START, seconds: 300, perSecond: 1, seed: 7, ...parts });
  events = stream.events;
  platform = await startChatPlatform(stream.listed);
  // The app's receiver took the first half by webhook, into its inbox, before it went down.
  const webhooks = createWebhooks({ auth, logger: {}, inbox: sqliteInbox({ path }), consume: false });
  for (const event of events.filter((e) => e.sentAt < START + 150)) {
    expect((await webhooks.handle(buildRequest(event.body, { auth }))).status).toBe(200);
  }
  await webhooks.close();
}, 30_000);
afterAll(async () => {
  await platform?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ CHAT_API_KEY: platform.apiKey });
const args = (...more: string[]) => ['reconcile', ...windowArgs, '--base-url', platform.baseUrl, ...more];

describe('chat-webhooks reconcile', () => {
  it('--help names --since and the inbox flags', async () => {
    const { code, stdout } = await runCli(['reconcile', '--help']);
    expect(code).toBe(0);
    for (const flag of ['--since', '--until', '--app-id', '--region', '--webhook', '--sqlite', '--redis', '--postgres', '--dry-run']) expect(stdout).toContain(flag);
  });

  it('--dry-run lists every event it would offer and writes nothing', async () => {
    const { code, stdout } = await runCli(args('--dry-run', '--json'), { env: env() });
    expect(code).toBe(0);
    const records = stdout.trim().split('\n').map((line) => JSON.parse(line) as { key?: string; report?: Record<string, number> });
    expect(records.filter((record) => record.key).length).toBe(events.length);
    expect(records.at(-1)!.report).toMatchObject({ listed: events.length, recovered: events.length });
  });

  it('puts what the inbox lacks into it, then recovers nothing the second time', async () => {
    const delivered = events.filter((e) => e.sentAt < START + 150).length;
    const first = await runCli(args('--sqlite', path), { env: env() });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${events.length} messages listed in 1 page: ${events.length - delivered} recovered into the sqlite inbox, ${delivered} already there, 0 skipped.`);
    const stats = await runCli(['inbox', 'stats', '--sqlite', path, '--json']);
    expect(JSON.parse(stats.stdout)).toMatchObject({ pending: events.length });
    const second = await runCli(args('--sqlite', path, '--json'), { env: env() });
    expect(JSON.parse(second.stdout).report).toMatchObject({ recovered: 0, duplicates: events.length });
  }, 30_000);

  it('reads the key from CHAT_API_KEY only: without it, a usage error (2); a wrong one, a failure (1) that does not echo it', async () => {
    expect((await runCli(args('--dry-run'), { env: { CHAT_API_KEY: undefined } })).code).toBe(2);
    expect((await runCli([...args('--dry-run'), '--api-key', 'k'], { env: env() })).code).toBe(2);
    const wrong = await runCli(args('--dry-run'), { env: { CHAT_API_KEY: 'wrong-key-123' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401');
    expect(wrong.stderr).not.toContain('wrong-key-123');
  });

  it('needs one inbox unless it is a dry run', async () => {
    const { code, stderr } = await runCli(args(), { env: env() });
    expect(code).toBe(2);
    expect(stderr).toContain('--sqlite');
  });

  it('draws a progress line on a terminal', async () => {
    const line = ['node', 'dist/src/cli/index.js', ...args('--dry-run')].map((arg) => `'${arg}'`).join(' ');
    const { code, stdout } = await runInTerminal(line, env());
    expect(code).toBe(0);
    expect(stdout).toMatch(/\rpage 1: \d+ listed/);
  });
});
