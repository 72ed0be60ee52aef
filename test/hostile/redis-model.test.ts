/**
 * Attacks on the Redis inbox's own data model (src/stores/redis/: keys.ts, the .lua scripts, admin.ts), against a
 * real redis-server: leases that run out under a handler still running, stale tokens, keys and prefixes with
 * characters that mean something to Redis's glob patterns, duplicate keys in one batch, counts in stats().
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox, InboxEntry } from '../../src/delivery/port.js';
import { redisInbox, type RedisInboxOptions } from '../../src/stores/redis/index.js';
import { redisPerSuite, startRedis } from '../support/redis-server.js';

const redis = redisPerSuite();
let serial = 0;
function entry(key = `m-${++serial}`, rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { n: serial } })): InboxEntry {
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody) as InboxEntry['event'], rawBody, receivedAt: Date.now() };
}

const opened: Inbox[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
});
function open(options: RedisInboxOptions = {}): Inbox {
  const inbox = redisInbox({ url: redis.server.url, prefix: `rm-${++serial}`, ...options });
  opened.push(inbox);
  return inbox;
}
const now = { leaseMs: 30_000, waitMs: 0 };

describe('a lease that runs out while its handler still runs', () => {
  it('once a second worker claimed it, the first holder\'s complete, fail and renew change nothing', async () => {
    const prefix = `lease-${++serial}`;
    const [a, b] = [open({ prefix }), open({ prefix })];
    await a.put(entry('slow'));
    const first = (await a.claim({ leaseMs: 50, waitMs: 0 }))!;
    await sleep(80);
    const second = (await b.claim(now))!;
    expect([second.key, second.attempt]).toEqual(['slow', 2]);

    await a.complete(first);
    await a.fail(first, { error: 'stale', retryAt: Date.now() });
    await a.fail(first, { error: 'stale', dead: true });
    expect(await a.renew(first, 60_000)).toBe(false);
    expect(await b.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    // The second holder's lease is whole: nobody else is handed the entry, and its completion counts once.
    expect(await a.claim(now)).toBeUndefined();
    expect(await b.renew(second, 30_000)).toBe(true);
    await b.complete(second);
    expect(await b.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    expect(await b.put(entry('slow'))).toBe('duplicate');
  });

  it('moved back to waiting by another claim, the first holder\'s complete does not finish it: it is handed out again', async () => {
    const prefix = `back-${++serial}`;
    const [a, b] = [open({ prefix }), open({ prefix })];
    await a.put(entry('lapsed'));
    const first = (await a.claim({ leaseMs: 50, waitMs: 0 }))!;
    await a.put(entry('other'));
    await sleep(80);
    // This claim moves the lapsed lease back behind 'other' and takes 'other'.
    expect((await b.claim(now))!.key).toBe('other');
    await a.complete(first);
    const again = (await b.claim(now))!;
    expect([again.key, again.attempt]).toEqual(['lapsed', 2]);
  });
});

describe('keys and prefixes that mean something to Redis', () => {
  const odd = ['*', '?', '[a-z]', 'seen:*', 'k_x', '\\', '%s%d', 'line\nbreak', 'é🙂', '', 'x'.repeat(100_000)];

  it('keys with glob, escape, control and astral characters, and a 100 000-character key, are stored, claimed and remembered apart', async () => {
    const inbox = open();
    expect(await Promise.all(odd.map((key) => inbox.put(entry(key))))).toEqual(odd.map(() => 'stored'));
    const claimed: string[] = [];
    for (let claim = await inbox.claim(now); claim; claim = await inbox.claim(now)) {
      claimed.push(claim.key);
      await inbox.complete(claim);
    }
    expect(claimed.sort()).toEqual([...odd].sort());
    await inbox.purge({ state: 'done' });
    // Purging done forgets them; a new put of each is stored once, a second is its duplicate.
    expect(await Promise.all(odd.map((key) => inbox.put(entry(key))))).toEqual(odd.map(() => 'stored'));
    expect(await Promise.all(odd.map((key) => inbox.put(entry(key))))).toEqual(odd.map(() => 'duplicate'));
  });

  it('purge of done under a prefix with glob characters forgets only its own keys, not another inbox\'s', async () => {
    for (const [globbed, other] of [['g?', 'gx'], ['h*', 'hello'], ['[ij]', 'i'], ['k\\', 'k']] as const) {
      const n = ++serial;
      const mine = open({ prefix: `${globbed}${n}` });
      const theirs = open({ prefix: `${other}${n}` });
      await theirs.put(entry('theirs'));
      await theirs.complete((await theirs.claim(now))!);
      await mine.put(entry('mine'));
      await mine.complete((await mine.claim(now))!);
      await mine.purge({ state: 'done' });
      // The other inbox still remembers its finished key: the platform's retry of it is not handled twice.
      expect([other, await theirs.put(entry('theirs'))]).toEqual([other, 'duplicate']);
      // And it forgets its own (a pattern that does not match its prefix literally would forget none).
      expect([globbed, await mine.put(entry('mine'))]).toEqual([globbed, 'stored']);
    }
  });
});

describe('puts in one batch', () => {
  it('the same key many times in one turn is stored once, one job, the rest duplicates; other keys beside it are stored', async () => {
    const inbox = open();
    const puts = [entry('same'), entry('a'), entry('same'), entry('same'), entry('b'), entry('same')];
    expect(await Promise.all(puts.map((put) => inbox.put(put)))).toEqual(['stored', 'stored', 'duplicate', 'duplicate', 'stored', 'duplicate']);
    expect(await inbox.stats()).toEqual({ pending: 3, running: 0, done: 0, dead: 0 });
    // The one stored is the first put's body.
    const claims = [(await inbox.claim(now))!, (await inbox.claim(now))!, (await inbox.claim(now))!];
    expect(claims.find((claim) => claim.key === 'same')!.rawBody).toBe(puts[0]!.rawBody);
    expect(await inbox.claim(now)).toBeUndefined();
  });
});

describe('Redis killed and started again on its data', () => {
  it('with appendfsync always, every put answered stored before a kill -9 is there after, once', async () => {
    const first = await startRedis(['--appendfsync', 'always']);
    const prefix = `restart-${++serial}`;
    const before = redisInbox({ url: first.url, prefix });
    const keys = Array.from({ length: 200 }, (_, i) => `r-${i}`);
    const answers = await Promise.all(keys.map((key) => before.put(entry(key))));
    expect(answers).toEqual(keys.map(() => 'stored'));
    const exited = new Promise((resolve) => first.process.once('exit', resolve));
    first.process.kill('SIGKILL');
    await exited;
    await before.close();
    const again = await startRedis(['--appendfsync', 'always'], { port: first.port, dir: first.dir });
    try {
      const after = open({ url: again.url, prefix });
      expect(await after.stats()).toEqual({ pending: 200, running: 0, done: 0, dead: 0 });
      expect(await after.put(entry('r-7'))).toBe('duplicate');
      const claimed = new Set<string>();
      for (let claim = await after.claim(now); claim; claim = await after.claim(now)) claimed.add(claim.key);
      expect(claimed.size).toBe(200);
    } finally {
      await again.stop();
    }
  });
});

describe('counts in stats()', () => {
  it('purge of done while completions run: what it counts removed and what stats() says after add up to every completion', async () => {
    const prefix = `count-${++serial}`;
    // The completions come from another connection (another worker): on one, Redis answers in order.
    const [inbox, worker] = [open({ prefix }), open({ prefix })];
    const total = 2000;
    await Promise.all(Array.from({ length: total }, () => inbox.put(entry())));
    const claims = await Promise.all(Array.from({ length: total }, () => worker.claim(now)));
    let purged = 0;
    let finished = false;
    const completing = (async () => {
      for (const claim of claims) await worker.complete(claim!);
      finished = true;
    })();
    while (!finished) purged += await inbox.purge({ state: 'done' });
    await completing;
    expect(purged + (await inbox.stats()).done).toBe(total);
  });
});
