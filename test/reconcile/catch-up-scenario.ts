/**
 * catchUp's start (issue 35 item 3), for any shared inbox: an earlier receiver left its mark five minutes ago
 * and took the minute before it by webhook; the four minutes and more since were lost to an outage. Two
 * receivers then start together on the inbox: between them, through the lock, one catch-up recovers each
 * missed event exactly once, finds the delivered ones duplicates, runs nothing from before the window, and
 * raises the mark to now.
 */
import { expect } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Inbox, type WebhookError, type Webhooks } from '../../src/index.js';
import { catchUp } from '../../src/reconcile/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { messageStream, startChatPlatform, type ChatPlatform, type ListedMessage } from '../support/chat-platform.js';
import { auth, recordHandled, until, type Handled } from './scenario.js';

export const parts = { appId: 'app1', region: 'eu', webhook: 'wh_main' };
/** The lock's and the mark's name for parts' app and webhook (the store's record, as redis-cli would show it). */
export const MARK = 'catch-up:app1:wh_main';
/** The mark of the latest run to begin, for the same app and webhook. */
export const BEGAN = 'catch-up-began:app1:wh_main';

/** A text message as the platform lists it. */
export const send = (id: string, sentAt: number): ListedMessage => ({
  id, sentAt, category: 'message', type: 'text', sender: 'u1', receiver: 'u2', receiverType: 'user', conversationId: 'u1_user_u2', data: { text: `message ${id}` },
});
/** Its delivery, sent now. */
export const delivery = (id: string) => buildRequest(JSON.stringify({ trigger: 'message_sent', ...parts, data: { message: send(id, Math.floor(Date.now() / 1000)) } }), { auth });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Deliveries to `webhooks` every `ms` (ids `7<n>`) until the function it returns is called; that resolves once
 * the last is answered, and rejects if one was not answered 200.
 */
export function deliveriesEvery(webhooks: Webhooks, ms: number): () => Promise<void> {
  let flowing = true;
  const stream = (async () => {
    for (let i = 0; flowing; i++) {
      expect((await webhooks.handle(delivery(`7${i}`))).status).toBe(200);
      await sleep(ms);
    }
  })();
  stream.catch(() => undefined); // awaited by the caller: a refused delivery fails the test there
  return async () => {
    flowing = false;
    await stream;
  };
}

export interface StartResult {
  platform: ChatPlatform;
  receivers: Array<{ webhooks: Webhooks; handled: Handled }>;
}

/** `inboxes` opens a handle on the same shared inbox each call (as one per process would be). */
export async function twoReceiversStart(openInbox: () => Inbox, closing: Array<{ close(): Promise<unknown> }>): Promise<StartResult> {
  const now = Math.floor(Date.now() / 1000);
  const markAt = now - 300;
  const { events, listed } = messageStream({ start: now - 500, seconds: 480, perSecond: 1, seed: 3, ...parts });
  const before = events.filter((event) => event.sentAt < markAt - 60);
  const delivered = events.filter((event) => event.sentAt >= markAt - 60 && event.sentAt < markAt);
  const missed = events.filter((event) => event.sentAt >= markAt);
  expect([before.length, delivered.length, missed.length].every((count) => count > 0)).toBe(true);

  // The earlier receiver: it took the minute before its mark by webhook, then went down.
  const earlier = createWebhooks({ auth, logger: {}, inbox: openInbox(), closeInbox: true });
  const earlierHandled = recordHandled(earlier);
  for (const event of delivered) expect((await earlier.handle(buildRequest(event.body, { auth }))).status).toBe(200);
  await until(() => earlierHandled.ids.length === delivered.length);
  const inbox = openInbox();
  closing.push(inbox);
  await inbox.setMark!(MARK, markAt * 1000);
  await earlier.close();

  const platform = await startChatPlatform(listed);
  closing.push(platform);
  const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
  const receivers = [0, 1].map(() => {
    const webhooks = createWebhooks({ auth, logger: {}, inbox: openInbox(), catchUp: catchUp({ chat, ...parts }) });
    closing.push(webhooks);
    return { webhooks, handled: recordHandled(webhooks) };
  });
  const all = () => receivers.flatMap(({ handled }) => handled.ids);
  await until(() => all().length >= missed.length);
  // Nothing more comes, however long the workers are given.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(all().sort()).toEqual(missed.map((event) => event.id).sort());
  // One walk of the window between the two receivers: the lock kept the other one out.
  const from = String(markAt - 60);
  expect(platform.queries.filter((query) => query.get('fromTimestamp') === from).length).toBe(1);
  // Raised when the run ends, after its redeliveries were handled: polled.
  await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThanOrEqual(now * 1000);
  return { platform, receivers };
}

/**
 * A run that began and never ended: receiver B starts after an outage, its run is refused (a wrong key), and B
 * stops before it tries again. Receiver A, whose deliveries flow all along, must take B's window up at its next
 * beat rather than raise the mark past it (which would lose the outage's events for good: every later start
 * walks from the mark).
 */
export async function failedRunTakenUp(openInbox: () => Inbox, closing: Array<{ close(): Promise<unknown> }>): Promise<void> {
  const platform = await startChatPlatform([]);
  closing.push(platform);
  const inbox = openInbox();
  closing.push(inbox);
  const receiver = (apiKey: string) => {
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey, retry: false });
    return createWebhooks({ auth, logger: {}, inbox: openInbox(), closeInbox: true, catchUp: catchUp({ chat, ...parts, horizonMs: 1000, marginMs: 1000 }) });
  };
  const a = receiver(platform.apiKey);
  closing.push(a);
  const handled = recordHandled(a);
  await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(0);
  const startMark = (await inbox.mark!(MARK))!;
  // A delivery every 100 ms (a tenth of the horizon): A never sees a silence, so only its beats can help.
  const stop = deliveriesEvery(a, 100);

  try {
    // The outage, then B: its start's run is refused, and B stops.
    const second = Math.floor(Date.now() / 1000);
    platform.messages.push(send('601', second), send('602', second));
    const b = receiver('wrong');
    closing.push(b);
    const errors: WebhookError[] = [];
    b.onError((error) => void errors.push(error));
    await until(() => errors.length === 1);
    expect(errors[0]!.code).toBe('catch_up_failed');
    await b.close();
    await until(() => handled.ids.includes('601') && handled.ids.includes('602'));
  } finally {
    await stop();
  }
  expect(handled.ids.filter((id) => id.startsWith('6')).sort()).toEqual(['601', '602']);
  // A's start, B's refused one, and A's run for B's window: nothing walked twice.
  expect(platform.queries.length).toBe(3);
  await expect.poll(() => inbox.mark!(MARK)).toBeGreaterThan(startMark);
}
