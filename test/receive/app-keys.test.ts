/**
 * One receiver serving several apps (issue 23, item 1): webhook ids are chosen by each customer and message ids
 * are unique only within an app, so two apps' `message_sent` with equal webhook and message ids are two events.
 * Both must be handled, through the in-memory duplicate window and through every inbox; a repeat within one app
 * is still a duplicate.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, idempotencyKey, memoryInbox, parseWebhook, type Inbox, type WebhooksOptions, type Webhooks } from '../../src/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { redisPerSuite } from '../support/redis-server.js';

const auth = { username: 'platform', password: 's3cret' };
const fixture = JSON.parse(readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8')) as {
  appId?: unknown;
  webhook: string;
  data: { message: { id: string; data: { text: string } } };
};

/** App `appId`'s message 1421 through the one webhook id both apps chose; `text` makes the bytes differ. */
function delivery(appId: unknown, text = 'hello', webhook = 'wh_chat_events', id = '1421'): string {
  const body = structuredClone(fixture);
  body.appId = appId;
  body.webhook = webhook;
  body.data.message.id = id;
  body.data.message.data.text = text;
  return JSON.stringify(body);
}

const open: Webhooks[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((webhooks) => webhooks.close()));
});

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A receiver recording which app each handled event and each duplicate belonged to. */
function receiver(options: Partial<WebhooksOptions> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  open.push(webhooks);
  const handled: Array<{ appId: unknown; key: string }> = [];
  const duplicates: string[] = [];
  webhooks.on('message_sent', (event, { key }) => void handled.push({ appId: event.appId, key }));
  webhooks.onDuplicate((_event, { key }) => void duplicates.push(key));
  const send = async (body: string) => {
    const response = await webhooks.handle(buildRequest(body, { auth }));
    await response.done;
    return response.status;
  };
  return { webhooks, handled, duplicates, send };
}

/** The behaviour every way of recognising repeats must have. */
async function twoAppsBothHandled(options: Partial<WebhooksOptions>) {
  const { handled, duplicates, send } = receiver(options);
  expect(await send(delivery('app-a'))).toBe(200);
  expect(await send(delivery('app-b'))).toBe(200);
  await until(() => handled.length === 2);
  expect(handled.map(({ appId }) => appId).sort()).toEqual(['app-a', 'app-b']);
  expect(handled.map(({ key }) => key).sort()).toEqual([
    'app-a:wh_chat_events:message_sent:1421',
    'app-b:wh_chat_events:message_sent:1421',
  ]);
  expect(duplicates).toEqual([]);

  // A repeat within one app, in other bytes, is still the same event.
  expect(await send(delivery('app-b', 'hello again'))).toBe(200);
  await until(() => duplicates.length === 1);
  expect(duplicates).toEqual(['app-b:wh_chat_events:message_sent:1421']);
  // Nothing more ran meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(handled).toHaveLength(2);
}

describe('two apps with equal webhook and message ids are both handled', () => {
  it('through the default in-memory duplicate window', async () => {
    await twoAppsBothHandled({});
  });

  it('through memoryInbox', async () => {
    await twoAppsBothHandled({ inbox: memoryInbox() });
  });

  const dir = mkdtempSync(join(tmpdir(), 'app-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const inboxes: Inbox[] = [];
  afterAll(async () => {
    await Promise.all(inboxes.map((inbox) => inbox.close()));
  });

  it('through sqliteInbox', async () => {
    const inbox = sqliteInbox({ path: join(dir, 'inbox.sqlite') });
    inboxes.push(inbox);
    await twoAppsBothHandled({ inbox });
  });

  const redis = redisPerSuite();
  it('through redisInbox', async () => {
    const inbox = redisInbox({ url: redis.server.url, prefix: 'app-keys', pollMs: 10 });
    inboxes.push(inbox);
    await twoAppsBothHandled({ inbox });
  });

  it('events without an appId keep the app\'s place, empty, and still meet their repeats', async () => {
    const { handled, duplicates, send } = receiver({ inbox: memoryInbox() });
    expect(await send(delivery(undefined))).toBe(200);
    expect(await send(delivery(undefined, 'again'))).toBe(200);
    await until(() => handled.length === 1 && duplicates.length === 1);
    expect(handled[0]?.key).toBe(':wh_chat_events:message_sent:1421');
    expect(duplicates).toEqual([':wh_chat_events:message_sent:1421']);
  });
});

/**
 * Deliveries whose key parts, joined unescaped, spelled one key (issue 33): a colon inside a part; the form
 * without `appId` against another app's; ids differing in a lone surrogate, which stores writing UTF-8 (SQLite,
 * Redis's hash of the key) kept as one U+FFFD. The second was answered 200 as a duplicate and never handled.
 */
const PAIRS: Array<[string, string, string]> = [
  ['a colon inside a part', delivery('a:b', 'first', 'c'), delivery('a', 'second', 'b:c')],
  ['the short form against the long', delivery(undefined, 'first', 'acme:wh'), delivery('acme', 'second', 'wh')],
  ['a lone surrogate', delivery('app', 'first', 'wh', '\uD800'), delivery('app', 'second', 'wh', '\uD801')],
];

/** The pair through one receiver: both handled under two keys, and a resend of the second is its duplicate. */
async function bothHandled(options: Partial<WebhooksOptions>, first: string, second: string) {
  const { handled, duplicates, send } = receiver(options);
  expect(await send(first)).toBe(200);
  expect(await send(second)).toBe(200);
  await until(() => handled.length === 2);
  expect(new Set(handled.map(({ key }) => key)).size).toBe(2);
  expect(await send(second.replace('second', 'second again'))).toBe(200);
  await until(() => duplicates.length === 1);
  // The second's own key: a worker may run the two in either order.
  expect(duplicates).toEqual([idempotencyKey(parseWebhook(second))]);
  expect(handled.map(({ key }) => key)).toContain(duplicates[0]);
}

describe('deliveries whose key parts once spelled one key are both handled (issue 33)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pair-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const inboxes: Inbox[] = [];
  afterAll(async () => {
    await Promise.all(inboxes.map((inbox) => inbox.close()));
  });
  const redis = redisPerSuite();
  let serial = 0;

  describe.each(PAIRS)('%s', (_name, first, second) => {
    it('through the default in-memory duplicate window', async () => {
      await bothHandled({}, first, second);
    });

    it('through memoryInbox', async () => {
      await bothHandled({ inbox: memoryInbox() }, first, second);
    });

    it('through sqliteInbox', async () => {
      const inbox = sqliteInbox({ path: join(dir, `inbox-${++serial}.sqlite`) });
      inboxes.push(inbox);
      await bothHandled({ inbox }, first, second);
    });

    it('through redisInbox', async () => {
      const inbox = redisInbox({ url: redis.server.url, prefix: `pair-${++serial}`, pollMs: 10 });
      inboxes.push(inbox);
      await bothHandled({ inbox }, first, second);
    });
  });
});
