/**
 * `inbox stats|list|retry|purge` against real stores: a SQLite file, a redis-server started for the test and
 * a database of the run's throw-away PostgreSQL cluster,
 * each filled through the store's own API (one entry pending, one done, one dead), then read and changed by
 * the built CLI as a child process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Inbox, InboxClaim } from '../../src/index.js';
import pg from 'pg';
import { postgresInbox, SCHEMA_VERSION } from '../../src/stores/postgres/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { entry } from '../inbox/contract.js';
import { postgresDatabase } from '../support/postgres-server.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { assertBuilt, runCli } from './run-cli.js';

const LEASE = { leaseMs: 30_000, waitMs: 0 };

/** One pending, one done, one dead (with its last error). Returns the dead entry's key. */
async function fill(inbox: Inbox): Promise<string> {
  for (const key of ['cli-done', 'cli-dead', 'cli-pending']) expect(await inbox.put(entry(key))).toBe('stored');
  const first = (await inbox.claim(LEASE)) as InboxClaim;
  await inbox.complete(first);
  const second = (await inbox.claim(LEASE)) as InboxClaim;
  await inbox.fail(second, { dead: true, error: 'TypeError: handler exploded' });
  return second.key;
}

const json = (stdout: string) => stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

function storeSuite(name: string, open: () => Promise<{ args: string[]; inbox: () => Inbox; cleanup: () => Promise<void> }>) {
  describe(`inbox commands on ${name}`, () => {
    let args: string[];
    let reopen: () => Inbox;
    let cleanup: () => Promise<void>;
    let deadKey: string;

    beforeAll(async () => {
      assertBuilt();
      ({ args, inbox: reopen, cleanup } = await open());
      const inbox = reopen();
      deadKey = await fill(inbox);
      await inbox.close();
    }, 30_000);

    afterAll(() => cleanup());

    it('stats counts each state', async () => {
      const { code, stdout } = await runCli(['inbox', 'stats', ...args, '--json']);
      expect(code).toBe(0);
      expect(json(stdout)).toEqual([{ kind: name, pending: 1, running: 0, done: 1, dead: 1 }]);
      const readable = await runCli(['inbox', 'stats', ...args]);
      expect(readable.stdout).toBe(`${name}: pending 1 · running 0 · done 1 · dead 1\n`);
    });

    it('list shows the dead entry with its last error', async () => {
      const { code, stdout } = await runCli(['inbox', 'list', ...args, '--json']);
      expect(code).toBe(0);
      expect(json(stdout)).toEqual([
        expect.objectContaining({ key: deadKey, state: 'dead', trigger: 'message_sent', lastError: 'TypeError: handler exploded' }),
      ]);
      const readable = await runCli(['inbox', 'list', ...args]);
      expect(readable.stdout).toContain('TypeError: handler exploded');
      expect(readable.stdout).toMatch(/^1 dead entry$/m);
    });

    it('list --json includes each entry\'s event and raw body', async () => {
      const [dead] = json((await runCli(['inbox', 'list', ...args, '--json'])).stdout) as { event: { trigger: string }; rawBody: string }[];
      expect(dead!.event.trigger).toBe('message_sent');
      expect(JSON.parse(dead!.rawBody)).toEqual(dead!.event);
    });

    it('show <key> prints the entry, its event and its raw body; --json the whole entry', async () => {
      const { code, stdout } = await runCli(['inbox', 'show', deadKey, ...args]);
      expect(code).toBe(0);
      expect(stdout).toContain('TypeError: handler exploded');
      const rawBody = stdout.slice(stdout.indexOf('\nraw body\n') + '\nraw body\n'.length).trimEnd();
      expect(JSON.parse(rawBody)).toMatchObject({ trigger: 'message_sent' });
      const event = stdout.slice(stdout.indexOf('\nevent\n') + '\nevent\n'.length, stdout.indexOf('\nraw body\n'));
      expect(JSON.parse(event)).toEqual(JSON.parse(rawBody));
      const [entry] = json((await runCli(['inbox', 'show', deadKey, ...args, '--json'])).stdout);
      expect(entry).toMatchObject({ key: deadKey, state: 'dead', attempts: 1, rawBody, event: JSON.parse(rawBody) });
    });

    it('show and retry of a key the inbox does not have say so, with the closest key, and exit 1', async () => {
      const shown = await runCli(['inbox', 'show', `${deadKey}x`, ...args]);
      expect(shown.code).toBe(1);
      expect(shown.stderr).toBe(`chat-webhooks: No entry with key "${deadKey}x" in the ${name} inbox. Did you mean "${deadKey}"? See \`chat-webhooks inbox list\`.\n`);
      const retried = await runCli(['inbox', 'retry', 'no-such-key', ...args]);
      expect(retried.code).toBe(1);
      expect(retried.stderr).toContain('No entry with key "no-such-key"');
      expect(retried.stdout).toBe('0 dead entries are pending again\n');
      const notDead = await runCli(['inbox', 'retry', 'cli-pending', ...args]);
      expect(notDead.code).toBe(1);
      expect(notDead.stderr).toBe('"cli-pending" is pending, not dead: nothing to retry.\n');
    });

    it('retry <key> of the dead entry makes it pending; the entry is dead again for the next test', async () => {
      const { code, stdout } = await runCli(['inbox', 'retry', deadKey, ...args]);
      expect(code).toBe(0);
      expect(stdout).toBe('1 dead entry is pending again\n');
      const inbox = reopen();
      try {
        const claims: InboxClaim[] = [];
        for (let claim = await inbox.claim(LEASE); claim; claim = await inbox.claim(LEASE)) claims.push(claim);
        const again = claims.find((claim) => claim.key === deadKey) as InboxClaim;
        await inbox.fail(again, { dead: true, error: 'TypeError: handler exploded' });
        for (const other of claims.filter((claim) => claim !== again)) await inbox.fail(other, { retryAt: Date.now(), error: 'put back' });
        expect(await inbox.stats()).toMatchObject({ pending: 1, dead: 1 });
      } finally {
        await inbox.close();
      }
    });

    it('retry makes the dead entry pending again; purge removes the done one', async () => {
      expect(json((await runCli(['inbox', 'retry', ...args, '--json'])).stdout)).toEqual([{ retried: 1 }]);
      expect(json((await runCli(['inbox', 'purge', '--state', 'done', ...args, '--json'])).stdout)).toEqual([{ purged: 1, state: 'done' }]);
      const inbox = reopen();
      try {
        expect(await inbox.stats()).toEqual({ pending: 2, running: 0, done: 0, dead: 0 });
      } finally {
        await inbox.close();
      }
    });
  });
}

storeSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-inbox-cli-'));
  const path = join(dir, 'inbox.db');
  return {
    args: ['--sqlite', path],
    inbox: () => sqliteInbox({ path }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

storeSuite('redis', async () => {
  const server: RedisServer = await startRedis();
  return { args: ['--redis', server.url], inbox: () => redisInbox({ url: server.url }), cleanup: () => server.stop() };
});

const database = postgresDatabase();
storeSuite('postgres', async () => ({
  args: ['--postgres', database.url, '--schema', 'cli'],
  inbox: () => postgresInbox({ connectionString: database.url, schema: 'cli' }),
  cleanup: async () => undefined,
}));

describe('inbox list --limit', () => {
  it('says how many there are when the limit cut the list: "3 of 10 pending"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-inbox-limit-'));
    const path = join(dir, 'inbox.db');
    const inbox = sqliteInbox({ path });
    for (let i = 0; i < 10; i++) await inbox.put(entry(`limit-${i}`));
    await inbox.close();
    try {
      const cut = await runCli(['inbox', 'list', '--state', 'pending', '--limit', '3', '--sqlite', path]);
      expect(cut.code).toBe(0);
      expect(cut.stdout.match(/^pending /gm)).toHaveLength(3);
      expect(cut.stdout).toMatch(/^3 of 10 pending entries \(--limit 3; raise it to see more\)$/m);
      // A limit that takes them all (exactly, or with room) is the plain count.
      for (const limit of ['10', '11']) {
        expect((await runCli(['inbox', 'list', '--state', 'pending', '--limit', limit, '--sqlite', path])).stdout).toMatch(/\n10 pending entries\n$/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('inbox migrate (PostgreSQL)', () => {
  it('prints the SQL, which creates the schema when run', async () => {
    const { code, stdout } = await runCli(['inbox', 'migrate', '--schema', 'printed']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^BEGIN;/);
    expect(stdout).toContain('CREATE TABLE IF NOT EXISTS "printed".inbox');
    expect(stdout).toMatch(/COMMIT;\n$/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(stdout);
      expect((await client.query('SELECT version FROM printed.schema_version')).rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await client.end();
    }
  });

  it('--apply migrates, once', async () => {
    const args = ['inbox', 'migrate', '--postgres', database.url, '--schema', 'applied', '--apply', '--json'];
    expect(json((await runCli(args)).stdout)).toEqual([{ schema: 'applied', from: 0, to: SCHEMA_VERSION }]);
    expect(json((await runCli(args)).stdout)).toEqual([{ schema: 'applied', from: SCHEMA_VERSION, to: SCHEMA_VERSION }]);
    const { stdout } = await runCli(['inbox', 'stats', '--postgres', database.url, '--schema', 'applied']);
    expect(stdout).toBe('postgres: pending 0 · running 0 · done 0 · dead 0\n');
  });

  it('--apply without --postgres is a usage error', async () => {
    const { code, stderr } = await runCli(['inbox', 'migrate', '--apply']);
    expect(code).toBe(2);
    expect(stderr).toContain('--postgres');
  });
});

describe('inbox usage', () => {
  it('a mistyped --state gets a did-you-mean', async () => {
    const { code, stderr } = await runCli(['inbox', 'list', '--state', 'ded', '--sqlite', 'x.db']);
    expect(code).toBe(2);
    expect(stderr).toContain('Expected one of pending, running, done, dead. Did you mean "dead"?');
  });

  it('a store that cannot be reached is one line and exit 1', async () => {
    const { code, stderr } = await runCli(['inbox', 'stats', '--redis', 'redis://127.0.0.1:9/']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an unreachable PostgreSQL is one line and exit 1', async () => {
    const { code, stderr } = await runCli(['inbox', 'stats', '--postgres', 'postgres://nobody@127.0.0.1:9/none']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/postgres inbox failed/);
  });
});
