/**
 * What the SQLite inbox (src/stores/sqlite/index.ts) does beyond the contract every store runs
 * (test/inbox/inboxes.test.ts): its options, waking local workers, the background expiry, the admin calls'
 * batches, and what closing leaves. Real files in a temp folder; a second `Database` plays another process.
 */
import { getEventListeners } from 'node:events';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { InboxClaim, InboxEntry } from '../../src/delivery/port.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'inbox-sqlite-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const pathOf = () => join(dir, `u-${++serial}.sqlite`);
function entry(key = `s-${++serial}`, receivedAt = Date.now()): InboxEntry {
  const event = { trigger: 'message_sent', appId: 'app', data: { message: { id: key } } };
  return { key, trigger: 'message_sent', event: event as InboxEntry['event'], rawBody: JSON.stringify(event), receivedAt };
}
const LEASE = { leaseMs: 30_000, waitMs: 0 };

/** Writes `count` dead rows straight into the file, as claims and failures would have left them. */
function seedDead(path: string, count: number): void {
  const db = new Database(path, { timeout: 5000 });
  const insert = db.prepare(
    `INSERT INTO inbox (key, trigger, state, due, received_at, attempts, last_error, raw_body) VALUES (?, 'message_sent', 3, 0, 0, 2, 'seeded', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`dead-${i}`, entry(`dead-${i}`).rawBody);
  })();
  db.close();
}

function rowCount(path: string, where = '1'): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT count(*) FROM inbox WHERE ${where}`).pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('sqliteInbox', () => {
  it('is the sqlite kind and durable, and makes the folder of its file', async () => {
    const path = join(dir, 'nested', 'deeper', 'inbox.sqlite');
    const inbox = sqliteInbox({ path });
    expect(inbox.kind).toBe('sqlite');
    expect(inbox.durable).toBe(true);
    expect(await inbox.put(entry())).toBe('stored');
    await inbox.close();
    expect(existsSync(path)).toBe(true);
  });

  it('refuses an empty path, and a windowMs that is not a positive number', () => {
    expect(() => sqliteInbox({ path: '' })).toThrow(
      new TypeError(
        'sqliteInbox needs `path` (the database file, e.g. sqliteInbox({ path: "./.data/inbox.db" })) or `database` (an open better-sqlite3 database), one of them.',
      ),
    );
    const windowMs = new TypeError('sqliteInbox: `windowMs` must be a positive number of milliseconds.');
    for (const bad of [0, -1, Number.NaN]) expect(() => sqliteInbox({ path: pathOf(), windowMs: bad })).toThrow(windowMs);
    const db = new Database(':memory:');
    db.close();
    expect(() => sqliteInbox({ database: db })).toThrow(new TypeError('sqliteInbox: `database` must be open for writing.'));
  });

  it('remembers a handled key for windowMs from its receipt, 24 hours by default', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path });
    const day = 24 * 60 * 60 * 1000;
    const [young, old] = [entry(undefined, Date.now() - day + 60_000), entry(undefined, Date.now() - day - 1)];
    for (const e of [young, old]) {
      await inbox.put(e);
      await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    }
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    expect(await inbox.put(young)).toBe('duplicate');
    expect(await inbox.put(old)).toBe('stored');
    await inbox.close();
  });

  it('deletes forgotten done rows in the background', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path, windowMs: 1 });
    await inbox.put(entry());
    await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    expect(rowCount(path)).toBe(1);
    await vi.waitFor(() => expect(rowCount(path)).toBe(0), { timeout: 5000, interval: 50 });
    await inbox.close();
  });

  it('a local put wakes one waiting worker at once, without waiting for its poll', async () => {
    const inbox = sqliteInbox({ path: pathOf(), pollMs: 10_000 });
    const started = Date.now();
    const waiting = [inbox.claim({ leaseMs: 30_000, waitMs: 5000 }), inbox.claim({ leaseMs: 30_000, waitMs: 300 })];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stored = entry();
    await inbox.put(stored);
    const [first, second] = await Promise.all(waiting);
    expect(first?.key).toBe(stored.key);
    expect(second).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3000);
    await inbox.close();
  });

  it('a failure with a retry time and a retry() wake the waiting workers', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path, pollMs: 10_000 });
    await inbox.put(entry());
    const held = (await inbox.claim(LEASE)) as InboxClaim;
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await inbox.fail(held, { retryAt: Date.now(), error: 'again' });
    const again = (await waiting) as InboxClaim;
    expect(again).toMatchObject({ key: held.key, attempt: 2 });

    await inbox.fail(again, { dead: true, error: 'dead' });
    const revived = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await inbox.retry()).toBe(1);
    expect(await revived).toMatchObject({ key: held.key, attempt: 1 });
    expect(Date.now() - started).toBeLessThan(3000);
    await inbox.close();
  });

  it('a worker finds another process’s put at its next poll, 100 ms by default', async () => {
    const path = pathOf();
    const [receiver, worker] = [sqliteInbox({ path }), sqliteInbox({ path })];
    const started = Date.now();
    const waiting = worker.claim({ leaseMs: 30_000, waitMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await receiver.put(entry());
    expect(await waiting).toBeDefined();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(95);
    expect(took).toBeLessThan(3000);
    await Promise.all([receiver.close(), worker.close()]);
  });

  it('a waiting claim ends when its signal aborts', async () => {
    const inbox = sqliteInbox({ path: pathOf(), pollMs: 10_000 });
    const controller = new AbortController();
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await waiting).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3000);
    await inbox.close();
  });

  it('a claim woken by a put takes its abort listener away: a burst raises no MaxListenersExceededWarning', async () => {
    // A poll as long as this keeps a woken pause's timer alive through the whole burst, on any machine.
    const inbox = sqliteInbox({ path: pathOf(), pollMs: 10_000 });
    const controller = new AbortController();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      // More wake-ups than Node's 10 listeners a signal, each claim waiting again with the same signal, as a worker's loop does.
      for (let round = 0; round < 30; round++) {
        const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000, signal: controller.signal });
        await inbox.put(entry());
        const claim = (await waiting) as InboxClaim;
        expect(claim).toBeDefined();
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
        await inbox.complete(claim);
      }
      // Node emits the warning on a later tick.
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('warning', onWarning);
      await inbox.close();
    }
    expect(warnings).toEqual([]);
  });

  it('lists entries with their error and body, none once done, 100 by default', async () => {
    const inbox = sqliteInbox({ path: pathOf() });
    const [a, b] = [entry(), entry()];
    await inbox.put(a);
    await inbox.put(b);
    await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'boom' });
    await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    expect(await inbox.list({ state: 'dead' })).toEqual([
      { key: a.key, trigger: 'message_sent', state: 'dead', receivedAt: a.receivedAt, attempts: 1, lastError: 'boom', event: a.event, rawBody: a.rawBody },
    ]);
    expect(await inbox.list({ state: 'done' })).toEqual([{ key: b.key, trigger: 'message_sent', state: 'done', receivedAt: b.receivedAt, attempts: 1 }]);
    await Promise.all(Array.from({ length: 120 }, () => inbox.put(entry())));
    expect(await inbox.list({ state: 'pending' })).toHaveLength(100);
    expect(await inbox.list({ state: 'pending', limit: 7 })).toHaveLength(7);
    await inbox.close();
  });

  it('retry() and purge() take every one of more than one batch (5 000 rows) of entries', async () => {
    const path = pathOf();
    await sqliteInbox({ path }).close();
    seedDead(path, 10_001);
    const inbox = sqliteInbox({ path });
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 10_001 });
    expect(await inbox.retry()).toBe(10_001);
    expect(await inbox.stats()).toEqual({ pending: 10_001, running: 0, done: 0, dead: 0 });
    expect(await inbox.claim(LEASE)).toMatchObject({ attempt: 1 });
    expect(await inbox.purge({ state: 'pending' })).toBe(10_000);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    await inbox.close();

    const exact = pathOf();
    await sqliteInbox({ path: exact }).close();
    seedDead(exact, 5000);
    const again = sqliteInbox({ path: exact });
    expect(await again.purge({ state: 'dead' })).toBe(5000);
    expect(await again.retry()).toBe(0);
    await again.close();
  });

  it('retry(keys) revives only those keys that are dead', async () => {
    const path = pathOf();
    await sqliteInbox({ path }).close();
    seedDead(path, 3);
    const inbox = sqliteInbox({ path });
    await inbox.put(entry('alive'));
    expect(await inbox.retry(['dead-0', 'dead-2', 'alive', 'unknown'])).toBe(2);
    expect((await inbox.list({ state: 'dead' })).map((listing) => listing.key)).toEqual(['dead-1']);
    expect(await inbox.retry([])).toBe(0);
    await inbox.close();
  });

  it('oldestPendingAt is the oldest receipt of the pending rows; after close, claims and it are refused', async () => {
    const inbox = sqliteInbox({ path: pathOf() });
    const now = Date.now();
    for (const age of [5000, 60_000, 1000]) await inbox.put(entry(undefined, now - age));
    expect(await inbox.oldestPendingAt!()).toBe(now - 60_000);
    await inbox.close();
    await inbox.close(); // twice is fine
    await expect(inbox.claim(LEASE)).rejects.toThrow('The SQLite inbox is closed.');
    await expect(inbox.oldestPendingAt!()).rejects.toThrow('The SQLite inbox is closed.');
    await expect(inbox.put(entry())).rejects.toThrow('The SQLite inbox is closed.');
    await expect(inbox.ping!()).rejects.toThrow('The SQLite inbox is closed.');
  });

  it('close() commits the writes already asked for before it closes the file', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path });
    const stored = entry();
    const put = inbox.put(stored);
    await inbox.close();
    expect(await put).toBe('stored');
    expect(rowCount(path)).toBe(1);
  });

  it('a claim whose waiting ends with nothing found makes no write', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path, pollMs: 20 });
    await inbox.put(entry(undefined));
    const held = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.fail(held, { retryAt: Date.now() + 60_000, error: 'later' });
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 100 })).toBeUndefined();
    expect(await inbox.list({ state: 'pending' })).toMatchObject([{ key: held.key, attempts: 1, lastError: 'later' }]);
    await inbox.close();
  });

  it('refuses to be called without options, with the same sentence', () => {
    expect(() => sqliteInbox(undefined as never)).toThrow(/^sqliteInbox needs `path`/);
  });

  it('a put waits about one second for another process’s write lock, then fails', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path });
    await inbox.put(entry());
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    try {
      await expect(inbox.put(entry())).rejects.toThrow(/locked|busy/i);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(waited).toBeLessThan(4000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await inbox.close();
    }
  });

  it('an idle inbox (its expiry, a polling worker) never waits for another process’s write lock', async () => {
    const path = pathOf();
    const inbox = sqliteInbox({ path, pollMs: 20 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let longest = 0;
    let last = Date.now();
    const ticker = setInterval(() => {
      longest = Math.max(longest, Date.now() - last);
      last = Date.now();
    }, 10);
    try {
      // Half a second past the expiry's first round (one second after the opening): its read finds nothing to
      // delete, so it takes no lock.
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 1500 })).toBeUndefined();
      // A stall that ended with the claim's own timer shows only here: that timer may run before the ticker's.
      longest = Math.max(longest, Date.now() - last);
      expect(longest).toBeLessThan(700);
    } finally {
      clearInterval(ticker);
      other.exec('ROLLBACK');
      other.close();
      await inbox.close();
    }
  });

  it('a worker that loses an entry to another process’s worker goes on waiting for the next one', async () => {
    const path = pathOf();
    const [a, b] = [sqliteInbox({ path, pollMs: 20 }), sqliteInbox({ path, pollMs: 20 })];
    await a.put(entry());
    const claims = [a.claim({ leaseMs: 30_000, waitMs: 3000 }), b.claim({ leaseMs: 30_000, waitMs: 3000 })];
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.put(entry());
    const [first, second] = await Promise.all(claims);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(first!.key).not.toBe(second!.key);
    await Promise.all([a.close(), b.close()]);
  });

  it('retry(keys) wakes the waiting workers', async () => {
    const path = pathOf();
    await sqliteInbox({ path }).close();
    seedDead(path, 1);
    const inbox = sqliteInbox({ path, pollMs: 10_000 });
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await inbox.retry(['dead-0'])).toBe(1);
    expect(await waiting).toMatchObject({ key: 'dead-0', attempt: 1 });
    expect(Date.now() - started).toBeLessThan(3000);
    await inbox.close();
  });

  it('a second close() closes nothing of what the process opened since', async () => {
    const inbox = sqliteInbox({ path: pathOf() });
    await inbox.close();
    const files = Array.from({ length: 8 }, (_, i) => {
      const path = join(dir, `other-${serial}-${i}`);
      writeFileSync(path, 'x');
      return openSync(path, 'r');
    });
    try {
      await inbox.close();
      for (const fd of files) expect(() => fstatSync(fd)).not.toThrow();
    } finally {
      for (const fd of files) closeSync(fd);
    }
  });

  it('leaves an application’s in-memory database’s checkpoint setting as it was', async () => {
    const db = new Database(':memory:');
    db.pragma('wal_autocheckpoint = 50');
    const inbox = sqliteInbox({ database: db });
    await inbox.put(entry());
    await inbox.close();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(50);
    db.close();
  });
});
