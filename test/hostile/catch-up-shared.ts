/**
 * The catch-up red-team tests' set-up: the local platform, one SQLite file shared by the receivers (with a
 * handle for the test itself) and a way to start receivers on it, each with its errors and handled events.
 */
import { join } from 'node:path';
import { createChatClient } from '../../src/api/index.js';
import { createWebhooks, type Inbox, type WebhookError } from '../../src/index.js';
import { catchUp, type CatchUpOptions } from '../../src/reconcile/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { startChatPlatform } from '../support/chat-platform.js';
import { parts } from '../reconcile/catch-up-scenario.js';
import { auth, recordHandled } from '../reconcile/scenario.js';

/** A horizon of 1 s: a loaded machine's pauses stay well under it, and silences take a second. */
export const HORIZON = { horizonMs: 1000, marginMs: 1000 };
let serial = 0;

/** What is opened goes on `closing` (closed in reverse by the test file's afterEach); the file goes in `dir`. */
export async function sharedInbox(closing: Array<{ close(): Promise<unknown> }>, dir: string) {
  const platform = await startChatPlatform([]);
  closing.push(platform);
  const path = join(dir, `shared-${++serial}.sqlite`);
  const inbox = sqliteInbox({ path, pollMs: 10 });
  closing.push(inbox);
  const receiver = (own: Inbox = sqliteInbox({ path, pollMs: 10 }), extra: Partial<CatchUpOptions> = {}, apiKey = platform.apiKey) => {
    const chat = createChatClient({ baseUrl: platform.baseUrl, apiKey, retry: false });
    const webhooks = createWebhooks({ auth, logger: {}, inbox: own, closeInbox: true, catchUp: catchUp({ chat, ...parts, ...HORIZON, ...extra }) });
    closing.push(webhooks);
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    return { webhooks, errors, handled: recordHandled(webhooks) };
  };
  return { platform, path, inbox, receiver };
}
