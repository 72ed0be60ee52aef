/**
 * The PostgreSQL inbox's LISTEN connection (src/stores/postgres/listener.ts) on its own, against the run's
 * throw-away cluster: how many waiters a notification wakes, when a wait ends, and how a lost or refused
 * connection is made again (found untested by mutation testing, tools/mutation/results.md).
 */
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Listener } from '../../src/stores/postgres/listener.js';
import { freePort } from '../support/redis-server.js';
import { postgresDatabase } from '../support/postgres-server.js';

const database = postgresDatabase();

let serial = 0;
const opened: Listener[] = [];
let admin: Promise<pg.Client> | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((listener) => listener.close()));
  const client = admin;
  admin = undefined;
  await (await client)?.end();
});

let closedPort: number;
beforeAll(async () => {
  closedPort = await freePort(); // nothing listens there: a connection is refused at once
});

/** A listener on a fresh channel; `connections` lists the clients it made, and `refuse` makes the next ones fail. */
function listener(options: { refuse?: number } = {}) {
  const channel = `listener.test.${process.pid}.${++serial}`;
  const clients: pg.Client[] = [];
  let refuse = options.refuse ?? 0;
  const newClient = () => {
    const url = refuse > 0 ? database.url.replace(/:\d+\//, `:${closedPort}/`) : database.url;
    refuse = Math.max(0, refuse - 1);
    const client = new pg.Client({ connectionString: url });
    clients.push(client);
    return client;
  };
  const made = new Listener(newClient, channel);
  opened.push(made);
  return { listener: made, channel, made: clients };
}

/** The test's own connection, for NOTIFY and for looking at the server's backends. */
function sql(): Promise<pg.Client> {
  admin ??= (async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    return client;
  })();
  return admin;
}

async function notify(channel: string, payload: string): Promise<void> {
  await (await sql()).query('SELECT pg_notify($1, $2)', [channel, payload]);
}

/** Backends LISTENing on `channel`: the listener's connection, seen from the server. */
async function listening(channel: string): Promise<number> {
  const { rows } = await (await sql()).query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${channel}"`]);
  return (rows[0] as { n: number }).n;
}

/** Waits (real time, at most 5 s; node:timers/promises is not faked) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(5);
  }
}

/** A wait whose end the test can observe. */
function waiting(of: Listener, seen: number, ms: number, signal?: AbortSignal) {
  const state = { woken: false, at: 0 };
  const started = Date.now();
  const done = of.wait(seen, ms, signal).then(() => {
    state.woken = true;
    state.at = Date.now() - started;
  });
  return Object.assign(state, { done });
}

describe('Listener: notifications', () => {
  it('connects once however often start() is called, and LISTENs on its channel', async () => {
    const { listener: l, channel, made } = listener();
    await Promise.all([l.start(), l.start()]);
    await l.start();
    expect(made).toHaveLength(1);
    expect(await listening(channel)).toBe(1);
  });

  it('a notification of n entries wakes n waiters; the others keep waiting; one without a count wakes one', async () => {
    const { listener: l, channel } = listener();
    await l.start();
    const seen = l.generation;
    const waits = Array.from({ length: 5 }, () => waiting(l, seen, 20_000));
    await notify(channel, '2');
    await until(() => l.generation === seen + 1);
    await sleep(50);
    expect(waits.filter((w) => w.woken)).toHaveLength(2);
    await notify(channel, 'not a count');
    await until(() => l.generation === seen + 2);
    await sleep(50);
    expect(waits.filter((w) => w.woken)).toHaveLength(3);
    await notify(channel, '0');
    await until(() => l.generation === seen + 3);
    await sleep(50);
    expect(waits.filter((w) => w.woken)).toHaveLength(4);
    // close() wakes whoever still waits.
    await l.close();
    await Promise.all(waits.map((w) => w.done));
    expect(waits.every((w) => w.at < 10_000)).toBe(true);
  });

  it('a wait that ended is no longer counted among the waiters a notification wakes', async () => {
    const { listener: l, channel } = listener();
    await l.start();
    const seen = l.generation;
    await l.wait(seen, 20); // ends on its timer
    const aborted = new AbortController();
    const gaveUp = waiting(l, seen, 20_000, aborted.signal);
    aborted.abort();
    await gaveUp.done;
    const later = waiting(l, seen, 20_000);
    await notify(channel, '1');
    await until(() => later.woken);
    expect(l.generation).toBe(seen + 1);
  });

  it('wakeAll() moves the generation and wakes every waiter', async () => {
    const { listener: l } = listener();
    const seen = l.generation;
    const waits = Array.from({ length: 3 }, () => waiting(l, seen, 20_000));
    l.wakeAll();
    await Promise.all(waits.map((w) => w.done));
    expect(l.generation).toBe(seen + 1);
    expect(waits.every((w) => w.at < 5000)).toBe(true);
  });
});

describe('Listener: wait', () => {
  it('returns at once when the generation moved since `seen`, or once closed', async () => {
    const { listener: l } = listener();
    l.wakeAll();
    const stale = waiting(l, l.generation - 1, 20_000);
    await stale.done;
    expect(stale.at).toBeLessThan(5000);
    await l.close();
    const closed = waiting(l, l.generation, 20_000);
    await closed.done;
    expect(closed.at).toBeLessThan(5000);
  });

  it('ends after `ms` without a notification, and leaves no timer behind when woken early', async () => {
    const { listener: l } = listener();
    const timed = waiting(l, l.generation, 150);
    await sleep(60);
    expect(timed.woken).toBe(false);
    await timed.done;
    expect(timed.at).toBeGreaterThanOrEqual(140);

    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const early = waiting(l, l.generation, 60_000);
    expect(timers()).toBe(before + 1);
    l.wakeAll();
    await early.done;
    expect(timers()).toBe(before);
  });

  it('an abort of its signal ends it, and the signal keeps no listener of it, however the wait ended', async () => {
    const { listener: l } = listener();
    const aborted = new AbortController();
    const wait = waiting(l, l.generation, 60_000, aborted.signal);
    await sleep(20);
    expect(wait.woken).toBe(false);
    aborted.abort();
    await wait.done;
    expect(wait.at).toBeLessThan(5000);

    const kept = new AbortController();
    await l.wait(l.generation, 10, kept.signal);
    const woken = waiting(l, l.generation, 60_000, kept.signal);
    l.wakeAll();
    await woken.done;
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });
});

describe('Listener: connection', () => {
  it('after its connection was cut, connects again, wakes every waiter, and hears notifications again', async () => {
    const { listener: l, channel, made } = listener();
    await l.start();
    const seen = l.generation;
    const waits = Array.from({ length: 2 }, () => waiting(l, seen, 20_000));
    await (await sql()).query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${channel}"`]);
    await Promise.all(waits.map((w) => w.done));
    expect(made).toHaveLength(2);
    expect(await listening(channel)).toBe(1);
    const next = waiting(l, l.generation, 20_000);
    await notify(channel, '1');
    await until(() => next.woken);
  });

  it('close() ends the listening connection, even one still being made, and connects no more', async () => {
    const { listener: l, channel, made } = listener();
    const starting = l.start();
    await l.close();
    await starting;
    await until(async () => (await listening(channel)) === 0);
    await l.start();
    expect(made).toHaveLength(1);

    const { listener: other, channel: otherChannel } = listener();
    await other.start();
    expect(await listening(otherChannel)).toBe(1);
    await other.close();
    await until(async () => (await listening(otherChannel)) === 0);
  });

  it('a refused connection is tried again after 100 ms, doubling up to 5 s; a connection made resets the pause', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { listener: l, made, channel } = listener({ refuse: 9 });
    await l.start();
    expect(made).toHaveLength(1);
    // The pauses after each refusal, then the ninth refusal's, after which the connection is made.
    for (const pause of [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]) {
      const before = made.length;
      vi.advanceTimersByTime(pause - 1);
      expect(made).toHaveLength(before);
      vi.advanceTimersByTime(1);
      expect(made).toHaveLength(before + 1);
      await l.start(); // the attempt under way
    }
    await until(async () => (await listening(channel)) === 1);
    // A connection lost now is made again after 100 ms, not after the refusals' pause.
    await (await sql()).query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${channel}"`]);
    const lost = made.length;
    await until(() => vi.getTimerCount() > 0);
    await sleep(50); // both the 'error' and the 'end' event of the lost connection have come
    vi.advanceTimersByTime(99);
    expect(made).toHaveLength(lost);
    vi.advanceTimersByTime(1);
    expect(made).toHaveLength(lost + 1);
    await l.start();
    await until(async () => (await listening(channel)) === 1);
  });

  it('a start() while a retry is scheduled replaces the retry: one attempt at a time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { listener: l, made } = listener({ refuse: 3 });
    await l.start(); // refused: a retry in 100 ms
    await l.start(); // refused again: the retry is now in 200 ms
    expect(made).toHaveLength(2);
    vi.advanceTimersByTime(199);
    expect(made).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(made).toHaveLength(3);
    await l.start();
  });
});
