/**
 * A reconcile run on OpenTelemetry (issue 35, item 5), with the SDK's in-memory exporter and a pull reader: one
 * `reconcile` span with the run's figures, and `chat_webhooks.reconciled` counted by outcome; a run that
 * stops on an error ends its span with an error status.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import { catchUp, reconcile } from '../../src/reconcile/index.js';
import { memoryInbox } from '../../src/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { startChatPlatform, type ChatPlatform } from '../support/chat-platform.js';
import { sdk, valueOf } from './sdk.js';

const auth = { username: 'platform', password: 's3cret' };
const parts = { appId: 'app1', region: 'eu', webhook: 'wh_main' };
const T = 1_780_000_000;
const send = (id: string, sentAt: number) => ({ id, sentAt, category: 'message', type: 'text', sender: 'u1', receiver: 'u2', receiverType: 'user', data: { text: 'hi' } });

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((thing) => thing.close()));
});

async function setUp(): Promise<{ platform: ChatPlatform; webhooks: Webhooks; otel: ReturnType<typeof sdk> }> {
  const otel = sdk();
  closing.push({ close: () => otel.shutdown() });
  const platform = await startChatPlatform([send('1', T), send('2', T + 1), send('3', T + 2), { id: '4', sentAt: T + 3, category: 'call', type: 'audio', data: { action: 'ended' } }]);
  closing.push(platform);
  const webhooks = createWebhooks({ auth, logger: {}, telemetry: otel.telemetry });
  closing.push(webhooks);
  return { platform, webhooks, otel };
}

describe('reconcile telemetry', () => {
  it('one span per run with its figures, and chat_webhooks.reconciled by outcome', async () => {
    const { platform, webhooks, otel } = await setUp();
    // Message 1 was delivered by webhook: reconcile finds it a duplicate.
    const delivered = JSON.stringify({ trigger: 'message_sent', data: { message: send('1', T) }, ...parts });
    await (await webhooks.handle(buildRequest(delivered, { auth }))).done;
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    await reconcile({ webhooks, chat, ...parts, since: T * 1000, until: (T + 10) * 1000, telemetry: otel.telemetry });

    const runs = otel.spans().filter((span) => span.name === 'reconcile');
    expect(runs.length).toBe(1);
    expect(runs[0]!.attributes).toMatchObject({
      'chat_webhooks.reconcile.listed': 4,
      'chat_webhooks.reconcile.recovered': 2,
      'chat_webhooks.reconcile.duplicates': 1,
      'chat_webhooks.reconcile.skipped': 1,
      'chat_webhooks.reconcile.pages': 1,
      'chat_webhooks.reconcile.since': new Date(T * 1000).toISOString(),
      'chat_webhooks.webhook': 'wh_main',
    });
    const points = await otel.points('chat_webhooks.reconciled');
    expect(valueOf(points, { 'chat_webhooks.reconcile.outcome': 'recovered' })).toBe(2);
    expect(valueOf(points, { 'chat_webhooks.reconcile.outcome': 'duplicate' })).toBe(1);
    expect(valueOf(points, { 'chat_webhooks.reconcile.outcome': 'skipped' })).toBe(1);
  });

  it('a run that stops on an error ends its span with an error status', async () => {
    const { platform, webhooks, otel } = await setUp();
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: 'wrong', retry: false });
    await expect(reconcile({ webhooks, chat, ...parts, since: T * 1000, until: (T + 10) * 1000, telemetry: otel.telemetry })).rejects.toThrow('401');
    const [run] = otel.spans().filter((span) => span.name === 'reconcile');
    expect(run!.status.code).toBe(SpanStatusCode.ERROR);
    expect(run!.attributes['chat_webhooks.reconcile.listed']).toBe(0);
  });

  it('a catch-up run (createWebhooks({ catchUp })) is a reconcile run: its span and its counts', async () => {
    const otel = sdk();
    closing.push({ close: () => otel.shutdown() });
    const now = Math.floor(Date.now() / 1000);
    const platform = await startChatPlatform([send('1', now - 10), send('2', now - 5)]);
    closing.push(platform);
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    // A durable inbox with the lock and marks: the memory inbox's operations, on an inbox that says it is durable.
    const inbox = Object.assign(memoryInbox(), { durable: true });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, telemetry: otel.telemetry, catchUp: catchUp({ chat, ...parts }) });
    closing.push(webhooks);
    await expect.poll(() => otel.spans().filter((span) => span.name === 'reconcile').length, { timeout: 5000 }).toBe(1);
    const [run] = otel.spans().filter((span) => span.name === 'reconcile');
    expect(run!.attributes).toMatchObject({ 'chat_webhooks.reconcile.listed': 2, 'chat_webhooks.reconcile.recovered': 2, 'chat_webhooks.webhook': 'wh_main' });
    expect(valueOf(await otel.points('chat_webhooks.reconciled'), { 'chat_webhooks.reconcile.outcome': 'recovered' })).toBe(2);
  });
});
