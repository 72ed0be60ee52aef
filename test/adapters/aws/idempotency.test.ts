/**
 * One contract for the consumer's idempotency stores: memoryIdempotency, and dynamoIdempotency against
 * dynalite (DynamoDB's API, run locally) through the real @aws-sdk/client-dynamodb client.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoIdempotency, memoryIdempotency, type IdempotencyStore } from '../../../adapters/aws/index.js';
import { idempotencyKey, type ParsedWebhook } from '../../../src/index.js';
import { startDynalite, type Dynamo } from './dynalite.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let tables = 0;

function contract(name: string, make: (windowMs?: number) => Promise<IdempotencyStore>) {
  describe(`${name}: the idempotency contract`, () => {
    it('a new key starts; a second begin while it runs is busy', async () => {
      const store = await make();
      const first = await store.begin('app:w:message_sent:1', 10_000);
      expect(first.state).toBe('started');
      expect(await store.begin('app:w:message_sent:1', 10_000)).toEqual({ state: 'busy' });
      expect((await store.begin('app:w:message_sent:2', 10_000)).state).toBe('started');
    });

    it('the receiver\'s keys of distinct events each start: none met another (issue 33)', async () => {
      const store = await make();
      // Parts that met joined unescaped, or in UTF-8 (lone surrogates are one U+FFFD there).
      const events = [
        { appId: 'a:b', webhook: 'c', id: '1' },
        { appId: 'a', webhook: 'b:c', id: '1' },
        { webhook: 'acme:wh', id: '1' },
        { appId: 'acme', webhook: 'wh', id: '1' },
        ...['\uD800', '\uD801', '\uFFFD'].map((id) => ({ appId: 'app', webhook: 'wh', id })),
      ].map(({ id, ...envelope }) => ({ ...envelope, trigger: 'message_sent', data: { message: { id } } }) as ParsedWebhook);
      for (const event of events) expect((await store.begin(idempotencyKey(event), 10_000)).state).toBe('started');
    });

    it('a completed key is done (skipped) until the window ends, then starts again', async () => {
      // A window long enough for the check right after completion to fall inside it on a busy machine.
      const store = await make(1000);
      const first = await store.begin('k', 10_000);
      if (first.state !== 'started') throw new Error('expected a start');
      await store.complete('k', first.token);
      expect(await store.begin('k', 10_000)).toEqual({ state: 'done' });
      await pause(1050);
      expect((await store.begin('k', 10_000)).state).toBe('started');
    });

    it('a released key starts again at once (the retry of a failed run)', async () => {
      const store = await make();
      const first = await store.begin('k', 10_000);
      if (first.state !== 'started') throw new Error('expected a start');
      await store.release('k', first.token);
      const second = await store.begin('k', 10_000);
      expect(second.state).toBe('started');
    });

    it('a lease that ran out (a run cut off) lets another run start; the stale holder changes nothing', async () => {
      const store = await make();
      const cut = await store.begin('k', 100);
      if (cut.state !== 'started') throw new Error('expected a start');
      await pause(150);
      const next = await store.begin('k', 10_000);
      if (next.state !== 'started') throw new Error('expected a start after the lease');
      expect(next.token).not.toBe(cut.token);
      // The cut-off run wakes up late: neither its release nor its completion touches the new run's claim.
      await store.release('k', cut.token);
      expect(await store.begin('k', 10_000)).toEqual({ state: 'busy' });
      await store.complete('k', cut.token);
      expect(await store.begin('k', 10_000)).toEqual({ state: 'busy' });
      await store.complete('k', next.token);
      expect(await store.begin('k', 10_000)).toEqual({ state: 'done' });
    });

    it('a release after completion does not forget the key', async () => {
      const store = await make();
      const run = await store.begin('k', 10_000);
      if (run.state !== 'started') throw new Error('expected a start');
      await store.complete('k', run.token);
      await store.release('k', run.token);
      expect(await store.begin('k', 10_000)).toEqual({ state: 'done' });
    });

    it('of many concurrent begins of one key, exactly one starts', async () => {
      const store = await make();
      const results = await Promise.all(Array.from({ length: 20 }, () => store.begin('contended', 10_000)));
      expect(results.filter((result) => result.state === 'started')).toHaveLength(1);
      expect(results.filter((result) => result.state === 'busy')).toHaveLength(19);
    });

    it('refuses a window that is not a positive number', async () => {
      await expect(make(0)).rejects.toThrow(/windowMs/);
    });
  });
}

contract('memoryIdempotency', async (windowMs) => memoryIdempotency(windowMs === undefined ? {} : { windowMs }));

let dynamo: Dynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(() => dynamo.stop());

contract('dynamoIdempotency (dynalite)', async (windowMs) => {
  const tableName = `idempotency-${++tables}`;
  const store = dynamoIdempotency({ tableName, client: dynamo.client, ...(windowMs === undefined ? {} : { windowMs }) });
  await dynamo.table(tableName);
  return store;
});

describe('dynamoIdempotency: the items', () => {
  it('carries a TTL attribute (seconds) at the window end; expiry is checked in code, before TTL removes it', async () => {
    const tableName = await dynamo.table('idempotency-items');
    const store = dynamoIdempotency({ tableName, client: dynamo.client, windowMs: 300 });
    const run = await store.begin('k', 10_000);
    if (run.state !== 'started') throw new Error('expected a start');
    const completedAt = Date.now();
    await store.complete('k', run.token);
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'k' } }, ConsistentRead: true }));
    expect(Item?.state).toEqual({ S: 'done' });
    const expiresAt = Number(Item?.expiresAt?.N);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor((completedAt + 300) / 1000));
    expect(expiresAt).toBeLessThanOrEqual(Math.ceil((Date.now() + 300) / 1000));
    // dynalite, like DynamoDB for hours, still holds the expired item: the code must not count it.
    await pause(350);
    expect((await store.begin('k', 10_000)).state).toBe('started');
  });

  it('a table that does not exist rejects (the consumer fails the record back to SQS)', async () => {
    const store = dynamoIdempotency({ tableName: 'missing', client: dynamo.client });
    await expect(store.begin('k', 1000)).rejects.toThrow(/non-existent table|not found|ResourceNotFound/i);
  });

  it('refuses options that cannot work', () => {
    expect(() => dynamoIdempotency({ tableName: '' })).toThrow(/tableName/);
    expect(() => dynamoIdempotency({ tableName: 't', windowMs: -1 })).toThrow(/windowMs/);
    expect(() => dynamoIdempotency({ tableName: 't', tabelName: 'x' } as never)).toThrow(/tabelName/);
  });
});
