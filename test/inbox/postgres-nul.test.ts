/**
 * postgresInbox writes NUL, which PostgreSQL's `text` refuses, as U+FFFD (src/inbox/postgres.ts, `columnText`):
 * in a trigger (an unknown one's name comes from the sender) and in a handler's error, on both of fail's
 * paths. What the store reads back says exactly what was written: NUL replaced one for one, the rest of the
 * text as it was, a text without NUL untouched. test/hostile/store-limits.test.ts runs the receiver through it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox } from '../../src/delivery/port.js';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { entry } from './contract.js';
import { postgresDatabase } from '../support/postgres-server.js';

const database = postgresDatabase();
const opened: Inbox[] = [];
let serial = 0;
afterEach(async () => {
  await Promise.all(opened.splice(0).map((inbox) => inbox.close()));
});

function open(): Inbox {
  const inbox = postgresInbox({ connectionString: database.url, schema: `nul_${process.pid}_${++serial}` });
  opened.push(inbox);
  return inbox;
}

describe('postgresInbox and NUL', () => {
  it('stores a trigger holding NUL with each NUL as U+FFFD, and one without as it is', async () => {
    const inbox = open();
    expect(await inbox.put(entry('k1', '\0poll\0\0voted\0'))).toBe('stored');
    expect(await inbox.put(entry('k2', 'poll_voted'))).toBe('stored');
    const triggers = (await inbox.list({ state: 'pending' })).map(({ key, trigger }) => [key, trigger]).sort();
    expect(triggers).toEqual([
      ['k1', '\uFFFDpoll\uFFFD\uFFFDvoted\uFFFD'],
      ['k2', 'poll_voted'],
    ]);
  });

  it("writes a handler's error holding NUL, for a retry and for a dead entry, NUL as U+FFFD", async () => {
    const inbox = open();
    await inbox.put(entry('retried'));
    const first = await inbox.claim({ leaseMs: 60_000, waitMs: 0 });
    await inbox.fail(first!, { retryAt: Date.now(), error: 'cannot post "nul\0here"' });
    const second = await inbox.claim({ leaseMs: 60_000, waitMs: 0 });
    expect(second?.attempt).toBe(2);
    const [pending] = await inbox.list({ state: 'running' });
    expect(pending?.lastError).toBe('cannot post "nul\uFFFDhere"');

    await inbox.fail(second!, { dead: true, error: '\0\0 and plain' });
    const [dead] = await inbox.list({ state: 'dead' });
    expect(dead?.lastError).toBe('\uFFFD\uFFFD and plain');
  });

  it('writes an error without NUL as it is', async () => {
    const inbox = open();
    await inbox.put(entry('plain'));
    const claim = await inbox.claim({ leaseMs: 60_000, waitMs: 0 });
    await inbox.fail(claim!, { dead: true, error: 'broke: \uFFFD already, and \\0' });
    const [dead] = await inbox.list({ state: 'dead' });
    expect(dead?.lastError).toBe('broke: \uFFFD already, and \\0');
  });
});
