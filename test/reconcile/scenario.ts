/**
 * The outage of issue 35's "Checked by", for any receiver: a ten-minute stream (timestamps, not real time) of
 * sends, edits and deletes, the first and last three minutes delivered by webhook (60 %), the four between lost
 * to an outage; messages before and after the window, and a few the list holds that are no webhook's
 * (group-member actions, a call that ended). reconcile for the window, with a 429 on the way, then again.
 */
import { expect } from 'vitest';
import { createChatClient } from '../../src/api/index.js';
import type { HandlerContext, Webhooks } from '../../src/index.js';
import { reconcile, type ReconcileReport } from '../../src/reconcile/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { messageStream, startChatPlatform, type ListedMessage } from '../support/chat-platform.js';

export const auth = { username: 'platform', password: 's3cret' };
const parts = { appId: 'app1', region: 'eu', webhook: 'wh_main' };
/** 2027-01-15T08:00:00Z, in epoch seconds: the window's first second. */
const START = 1_800_000_000;
const WINDOW_SECONDS = 600;

/** Messages in the window that no webhook carries: reconcile skips them, by kind. */
function notWebhooks(): ListedMessage[] {
  const action = (id: string, sentAt: number) => ({ id, sentAt, category: 'action', type: 'groupMember', data: { action: 'joined', entities: {} } });
  return [
    action('990', START + 30),
    action('991', START + 200),
    { id: '992', sentAt: START + 300, category: 'call', type: 'audio', data: { action: 'ended', entities: {} } },
  ];
}

export interface Handled {
  ids: string[];
  reconciled: string[];
}

/** Handlers that record every event's message id, and which ones were told they came from reconcile. */
export function recordHandled(webhooks: Webhooks): Handled {
  const handled: Handled = { ids: [], reconciled: [] };
  const record = (event: { data: { message: { id: string } } }, context: HandlerContext) => {
    handled.ids.push(event.data.message.id);
    if (context.source === 'reconcile') handled.reconciled.push(event.data.message.id);
  };
  webhooks.on(['message_sent', 'message_edited', 'message_deleted'], record as never);
  return handled;
}

export async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface OutageResult {
  first: ReconcileReport;
  second: ReconcileReport;
  truth: { window: number; delivered: number; missed: number; outside: number };
  throttledWaitMs: number;
}

/**
 * Runs the outage against `webhooks` (its handlers recorded in `handled`: at once for the in-memory window,
 * through the in-process worker for an inbox). Asserts every window event handled exactly once, and nothing
 * outside the window; resolves both reports and the truth to compare them with.
 */
export async function outage(webhooks: Webhooks, handled: Handled): Promise<OutageResult> {
  // The stream starts a minute before the window and ends a minute after it.
  const { events, listed } = messageStream({ start: START - 60, seconds: WINDOW_SECONDS + 120, perSecond: 3, seed: 35, ...parts });
  const inWindow = (sentAt: number) => sentAt >= START && sentAt < START + WINDOW_SECONDS;
  const lost = (sentAt: number) => sentAt >= START + 180 && sentAt < START + 420;
  const windowEvents = events.filter((event) => inWindow(event.sentAt));
  const delivered = windowEvents.filter((event) => !lost(event.sentAt));
  const missed = windowEvents.filter((event) => lost(event.sentAt));
  // The platform delivers concurrently: a few dozen at a time.
  for (let i = 0; i < delivered.length; i += 50) {
    const responses = await Promise.all(delivered.slice(i, i + 50).map((event) => webhooks.handle(buildRequest(event.body, { auth }))));
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    await Promise.all(responses.map((response) => response.done));
  }
  await until(() => handled.ids.length === delivered.length);

  const platform = await startChatPlatform([...listed, ...notWebhooks()]);
  try {
    // retry: false, so the 429 is reconcile's to wait out, not the client's.
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey, retry: false });
    const window = { since: new Date(START * 1000), until: (START + WINDOW_SECONDS) * 1000 - 1 };
    platform.throttle(1, 1);
    const started = Date.now();
    const first = await reconcile({ webhooks, chat, ...parts, ...window });
    const throttledWaitMs = Date.now() - started;
    await until(() => handled.ids.length === windowEvents.length);
    const second = await reconcile({ webhooks, chat, ...parts, ...window });
    // Nothing more runs after the second walk, however long the workers are given.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const handledOnce = [...handled.ids].sort();
    expect(handledOnce).toEqual(windowEvents.map((event) => event.id).sort());
    expect(new Set(handled.ids).size).toBe(handled.ids.length);
    // Every query stayed within the window's seconds, and a 429 came back once.
    expect(platform.queries.every((query) => Number(query.get('fromTimestamp')) >= START && query.get('toTimestamp') === String(START + WINDOW_SECONDS - 1))).toBe(true);
    return {
      first,
      second,
      truth: { window: windowEvents.length, delivered: delivered.length, missed: missed.length, outside: events.length - windowEvents.length },
      throttledWaitMs,
    };
  } finally {
    await platform.close();
  }
}

/** The figures every receiver must report: equal to the truth. */
export function expectTruth(result: OutageResult): void {
  const { first, second, truth } = result;
  expect(truth.missed).toBeGreaterThan(0);
  expect(truth.outside).toBeGreaterThan(0);
  expect(first).toEqual({
    listed: truth.window + 3,
    recovered: truth.missed,
    duplicates: truth.delivered,
    skipped: 3,
    pages: expect.any(Number),
    throttled: 1,
    skippedByKind: { 'action:groupMember:joined': 2, 'call:audio:ended': 1 },
  });
  // Over a page: equal-second messages came again at the edge and were dropped, not counted twice.
  expect(first.pages).toBeGreaterThan(1);
  expect(result.throttledWaitMs).toBeGreaterThanOrEqual(1000);
  expect(second).toMatchObject({ listed: truth.window + 3, recovered: 0, duplicates: truth.window, skipped: 3, throttled: 0 });
}
