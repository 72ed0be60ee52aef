/**
 * reconcile (issue 35) against the local platform of test/support/chat-platform.ts: the outage of the issue's
 * "Checked by" through a receiver on the in-memory window, memoryInbox and sqliteInbox (Redis and PostgreSQL:
 * reconcile-servers.test.ts). Each recovers exactly the missed events, handles every event once, runs nothing
 * outside the window, waits out a 429, and recovers 0 when run again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, memoryInbox, type Inbox, type Webhooks } from '../../src/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { auth, expectTruth, outage, recordHandled } from './scenario.js';

const open: Webhooks[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((webhooks) => webhooks.close()));
});
const dir = mkdtempSync(join(tmpdir(), 'reconcile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function receiver(inbox?: Inbox) {
  const webhooks = createWebhooks({ auth, logger: {}, ...(inbox ? { inbox } : {}) });
  open.push(webhooks);
  return { webhooks, handled: recordHandled(webhooks) };
}

describe('reconcile after an outage', () => {
  it('on the in-memory window: the missed events run once, told they came from reconcile', async () => {
    const { webhooks, handled } = receiver();
    const result = await outage(webhooks, handled);
    expectTruth(result);
    expect(handled.reconciled.length).toBe(result.truth.missed);
  }, 30_000);

  it('on memoryInbox', async () => {
    const { webhooks, handled } = receiver(memoryInbox());
    expectTruth(await outage(webhooks, handled));
  }, 30_000);

  it('on sqliteInbox', async () => {
    const { webhooks, handled } = receiver(sqliteInbox({ path: join(dir, 'inbox.sqlite'), pollMs: 10 }));
    expectTruth(await outage(webhooks, handled));
  }, 30_000);
});
