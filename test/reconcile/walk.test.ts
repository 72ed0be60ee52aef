/**
 * reconcile's walk and rebuild against the local platform, one rule each: equal-second runs across page edges,
 * more than a page in one second, `until`, a 429 beyond the client's retries, other errors as ApiError, the
 * kinds it cannot rebuild, a refused event, and a receiver that cannot store.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Inbox, type Webhooks } from '../../src/index.js';
import { memoryInbox } from '../../src/index.js';
import { reconcile, ReconcileError } from '../../src/reconcile/index.js';
import { startChatPlatform, type ChatPlatform, type ListedMessage } from '../support/chat-platform.js';

const parts = { appId: '2601c4f1a2b3c4d5', region: 'us', webhook: 'wh_chat_events' };
/** 2026-05-28T20:26:40Z in epoch seconds: in the past, so a window without `until` (now) holds it. */
const T = 1_780_000_000;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8'));

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((thing) => thing.close()));
});

async function platformWith(messages: ListedMessage[]): Promise<ChatPlatform> {
  const platform = await startChatPlatform(messages);
  closing.push(platform);
  return platform;
}

function receiver(options: { inbox?: Inbox; invalidPayload?: 'reject' } = {}): { webhooks: Webhooks; sent: string[] } {
  const webhooks = createWebhooks({ auth: { username: 'platform', password: 's3cret' }, logger: {}, ...options });
  closing.push(webhooks);
  const sent: string[] = [];
  webhooks.on('message_sent', (event) => void sent.push(event.data.message.id));
  return { webhooks, sent };
}

const chatOf = (platform: ChatPlatform, retry: number | false = false) => createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry });
/** `count` sends, ids from `firstId` up, `perSecond` sharing each second from `second` on. */
function sends(count: number, second: number, perSecond: number, firstId = 5000): ListedMessage[] {
  return Array.from({ length: count }, (_, i) => ({ id: String(firstId + i), sentAt: second + Math.floor(i / perSecond), category: 'message', type: 'text', sender: 'u1', receiver: 'u2', receiverType: 'user', data: { text: 'hi' } }));
}

describe('the walk', () => {
  it('drops the messages of the edge second that come again on the next page: each is handled once', async () => {
    // 2 500 messages, 7 a second: every page ends inside a second, whose messages start the next page again.
    const platform = await platformWith(sends(2500, T, 7));
    const { webhooks, sent } = receiver();
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 1000) * 1000 });
    expect(report).toMatchObject({ listed: 2500, recovered: 2500, duplicates: 0, pages: 3 });
    expect(new Set(sent).size).toBe(2500);
    expect(sent.length).toBe(2500);
    expect(platform.queries.map((query) => query.get('limit'))).toEqual(['1000', '1000', '1000']);
    expect(platform.queries.map((query) => query.get('affix'))).toEqual(['append', 'append', 'append']);
  });

  it('walks past a second holding more than a page, by id', async () => {
    const platform = await platformWith([...sends(1500, T, 1500), ...sends(10, T + 1, 10, 9000)]);
    const { webhooks, sent } = receiver();
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 5) * 1000 });
    expect(report).toMatchObject({ listed: 1510, recovered: 1510 });
    expect(new Set(sent).size).toBe(1510);
  });

  it('keeps to the seconds [since, until] touches, and asks for nothing beyond', async () => {
    const platform = await platformWith(sends(30, T - 10, 1));
    const { webhooks, sent } = receiver();
    // since T+0.5 s, until T+9.999 s. The message of second T (sentAt T, whole seconds) may have been sent
    // after T+0.5 s: kept, since a duplicate costs a lookup and a lost event is lost; the one of T-1 is not.
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: new Date(T * 1000 + 500), until: new Date(T * 1000 + 9999) });
    expect(report.listed).toBe(10);
    expect(sent.map(Number)).toEqual(Array.from({ length: 10 }, (_, i) => 5000 + 10 + i));
    expect(platform.queries[0]!.get('fromTimestamp')).toBe(String(T));
    expect(platform.queries[0]!.get('toTimestamp')).toBe(String(T + 9));
  });

  it('waits out 429s for their Retry-After, beyond what the client retries, and reports them', async () => {
    const platform = await platformWith(sends(3, T, 1));
    platform.throttle(2, 1);
    const { webhooks } = receiver();
    const started = Date.now();
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 5) * 1000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(report).toMatchObject({ listed: 3, recovered: 3, throttled: 2, pages: 1 });
    expect(platform.queries.length).toBe(3);
  });

  it('rejects with the client ApiError for any other failure (a wrong key: 401)', async () => {
    const platform = await platformWith(sends(3, T, 1));
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: 'not-the-key', retry: false });
    const { webhooks } = receiver();
    const failure = await reconcile({ webhooks, chat, ...parts, since: T * 1000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(401);
  });

  it('stops at once when its signal aborts', async () => {
    const platform = await platformWith(sends(3, T, 1));
    platform.throttle(1, 30);
    const { webhooks } = receiver();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('enough')), 100);
    const started = Date.now();
    await expect(reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, signal: controller.signal })).rejects.toThrow('enough');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('calls onProgress after each page with the figures so far', async () => {
    const platform = await platformWith(sends(1200, T, 3));
    const { webhooks } = receiver();
    const seen: Array<{ pages: number; listed: number }> = [];
    await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 1000) * 1000, onProgress: ({ pages, listed }) => void seen.push({ pages, listed }) });
    expect(seen.map(({ pages }) => pages)).toEqual([1, 2]);
    expect(seen[0]!.listed).toBe(1000);
  });
});

describe('rebuilding', () => {
  it('rebuilds the fixtures\' messages as the webhooks carried them: the same keys, the same events', async () => {
    const messages = ['message_sent', 'message_edited', 'message_deleted', 'call_initiated'].map((name) => {
      const event = fixture(name);
      return (event.data.message ?? event.data.call) as ListedMessage;
    });
    const platform = await platformWith(messages.map((message) => ({ ...message, sentAt: T })));
    const { webhooks } = receiver();
    const got: Array<{ event: unknown; key: string; source?: string }> = [];
    webhooks.onAny((event, { key, source }) => void got.push({ event, key, source }));
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 1) * 1000 });
    expect(report).toMatchObject({ listed: 4, recovered: 4, skipped: 0 });
    const keys = got.map(({ key }) => key).sort();
    expect(keys).toEqual([
      `2601c4f1a2b3c4d5:wh_chat_events:call_initiated:1440:${T}`,
      '2601c4f1a2b3c4d5:wh_chat_events:message_deleted:1431',
      '2601c4f1a2b3c4d5:wh_chat_events:message_edited:1422',
      '2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421',
    ]);
    expect(got.every(({ source }) => source === 'reconcile')).toBe(true);
    // Each rebuilt envelope is the fixture itself (but for the sentAt the test moved into the window).
    for (const name of ['message_sent', 'message_edited', 'message_deleted', 'call_initiated']) {
      const rebuilt = got.find(({ event }) => (event as { trigger: string }).trigger === name)!.event as Record<string, unknown>;
      const expected = fixture(name);
      const field = name === 'call_initiated' ? 'call' : 'message';
      expected.data[field].sentAt = T;
      expect(rebuilt).toEqual(expected);
    }
  });

  it('skips what it cannot rebuild, counted by kind, and what the receiver refuses, by its code', async () => {
    const platform = await platformWith([
      { id: '1', sentAt: T, category: 'action', type: 'groupMember', data: { action: 'joined', entities: {} } },
      { id: '2', sentAt: T, category: 'call', type: 'video', data: { action: 'ended', entities: {} } },
      { id: '3', sentAt: T, category: 'interactive', type: 'form', data: {} },
      // A message_sent whose message lacks what the schema requires: refused with invalidPayload: 'reject'.
      { id: '4', sentAt: T, category: 'message', type: 'text' },
    ]);
    const { webhooks, sent } = receiver({ invalidPayload: 'reject' });
    const errors: string[] = [];
    webhooks.onError((error) => void errors.push(error.code));
    const report = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 1) * 1000 });
    expect(report).toEqual({
      listed: 4, recovered: 0, duplicates: 0, skipped: 4, pages: 1, throttled: 0,
      skippedByKind: { 'action:groupMember:joined': 1, 'call:video:ended': 1, interactive: 1, 'refused:invalid_payload': 1 },
    });
    expect(sent).toEqual([]);
    expect(errors).toEqual(['invalid_payload']);
  });

  it('stops with a ReconcileError, its figures so far, when the receiver cannot store', async () => {
    const platform = await platformWith(sends(3, T, 1));
    const inbox = memoryInbox();
    inbox.put = () => Promise.reject(new Error('disk full'));
    const { webhooks } = receiver({ inbox });
    const failure = await reconcile({ webhooks, chat: chatOf(platform), ...parts, since: T * 1000, until: (T + 5) * 1000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ReconcileError);
    expect((failure as ReconcileError).message).toContain('503 (inbox_failed)');
    expect((failure as ReconcileError).report).toMatchObject({ listed: 3, recovered: 0 });
  });
});
