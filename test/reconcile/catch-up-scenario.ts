/**
 * catchUp's start (issue 35 item 3), for any shared inbox: an earlier receiver left its mark five minutes ago
 * and took the minute before it by webhook; the four minutes and more since were lost to an outage. Two
 * receivers then start together on the inbox: between them, through the lock, one catch-up recovers each
 * missed event exactly once, finds the delivered ones duplicates, runs nothing from before the window, and
 * raises the mark to now.
 */
import { expect } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Inbox, type Webhooks } from '../../src/index.js';
import { catchUp } from '../../src/reconcile/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { messageStream, startChatPlatform, type ChatPlatform } from '../support/chat-platform.js';
import { auth, recordHandled, until, type Handled } from './scenario.js';

export const parts = { appId: 'app1', region: 'eu', webhook: 'wh_main' };
/** The lock's and the mark's name for parts' app and webhook (the store's record, as redis-cli would show it). */
export const MARK = 'catch-up:app1:wh_main';

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
