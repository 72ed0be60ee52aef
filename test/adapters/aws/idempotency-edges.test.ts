/**
 * The idempotency stores at their edges: a lease or a window ending to the millisecond (the clock set with
 * fake `Date` only; dynalite still evaluates the real condition expression), calls for keys never begun, the
 * option checks with their messages, the memory store's sweep, and DynamoDB answering in ways the contract
 * test (idempotency.test.ts) never makes it answer: an item gone between the write and the read, a write
 * refused for another reason than its condition, the default client from the environment.
 */
import { DeleteItemCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamoIdempotency, memoryIdempotency, type IdempotencyStore } from '../../../adapters/aws/index.js';
import { ConfigurationError } from '../../../src/index.js';
import { startDynalite, type Dynamo } from './dynalite.js';

let dynamo: Dynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(() => dynamo.stop());
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

let tables = 0;
const newTable = () => dynamo.table(`edges-${++tables}`);

const started = async (store: IdempotencyStore, key: string, leaseMs: number): Promise<string> => {
  const begun = await store.begin(key, leaseMs);
  if (begun.state !== 'started') throw new Error(`expected ${key} to start, it was ${begun.state}`);
  return begun.token;
};

/** Only `Date` is faked: timers, sockets and the SDK's retries stay real. */
const clockAt = (ms: number) => {
  vi.useFakeTimers({ toFake: ['Date'], now: ms });
  return (at: number) => vi.setSystemTime(at);
};

function edges(name: string, make: (windowMs?: number) => Promise<IdempotencyStore>) {
  describe(`${name} at its edges`, () => {
    it('a lease is over at its end to the millisecond: busy one millisecond before, started at it', async () => {
      const store = await make();
      const T = Date.now();
      const at = clockAt(T);
      await started(store, 'k', 100);
      at(T + 99);
      expect(await store.begin('k', 100)).toEqual({ state: 'busy' });
      at(T + 100);
      expect((await store.begin('k', 100)).state).toBe('started');
    });

    it('a window is over at its end to the millisecond: done one millisecond before, started at it', async () => {
      const store = await make(5000);
      const T = Date.now();
      const at = clockAt(T);
      const token = await started(store, 'k', 100);
      at(T + 10);
      await store.complete('k', token);
      at(T + 10 + 4999);
      expect(await store.begin('k', 100)).toEqual({ state: 'done' });
      at(T + 10 + 5000);
      expect((await store.begin('k', 100)).state).toBe('started');
    });

    it('complete and release of a key never begun change nothing: the key then starts', async () => {
      const store = await make();
      await expect(store.complete('never-begun', 'a-token')).resolves.toBeUndefined();
      await expect(store.release('never-released', 'a-token')).resolves.toBeUndefined();
      expect((await store.begin('never-begun', 10_000)).state).toBe('started');
      expect((await store.begin('never-released', 10_000)).state).toBe('started');
    });

    it('a release with another run\'s token leaves the running key busy', async () => {
      const store = await make();
      await started(store, 'k', 10_000);
      await store.release('k', 'not-its-token');
      expect(await store.begin('k', 10_000)).toEqual({ state: 'busy' });
    });
  });
}

edges('memoryIdempotency', async (windowMs) => memoryIdempotency(windowMs === undefined ? {} : { windowMs }));
edges('dynamoIdempotency (dynalite)', async (windowMs) => {
  const tableName = await newTable();
  return dynamoIdempotency({ tableName, client: dynamo.client, ...(windowMs === undefined ? {} : { windowMs }) });
});

const configurationError = (make: () => unknown): ConfigurationError => {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('did not throw');
};

describe('the option checks', () => {
  it.each([0, -1, Number.NaN, Infinity, '1000', null])('refuses windowMs %s, naming the store and the option', (windowMs) => {
    const memory = configurationError(() => memoryIdempotency({ windowMs: windowMs as number }));
    expect(memory.option).toBe('windowMs');
    expect(memory.message).toBe('memoryIdempotency: `windowMs` must be a positive number of milliseconds.');
    const inDynamo = configurationError(() => dynamoIdempotency({ tableName: 't', client: dynamo.client, windowMs: windowMs as number }));
    expect(inDynamo.option).toBe('windowMs');
    expect(inDynamo.message).toBe('dynamoIdempotency: `windowMs` must be a positive number of milliseconds.');
  });

  it('takes a window of 1 ms and of the largest finite number', () => {
    for (const windowMs of [1, Number.MAX_VALUE]) {
      expect(() => memoryIdempotency({ windowMs })).not.toThrow();
      expect(() => dynamoIdempotency({ tableName: 't', client: dynamo.client, windowMs })).not.toThrow();
    }
  });

  it('memoryIdempotency takes no options at all (a 24-hour window)', async () => {
    const store = memoryIdempotency();
    const T = Date.now();
    const at = clockAt(T);
    await store.complete('k', await started(store, 'k', 100));
    at(T + 24 * 60 * 60 * 1000 - 1);
    expect(await store.begin('k', 100)).toEqual({ state: 'done' });
    at(T + 24 * 60 * 60 * 1000);
    expect((await store.begin('k', 100)).state).toBe('started');
  });

  it('names the store in an unknown option\'s message', () => {
    expect(configurationError(() => memoryIdempotency({ window: 1 } as never)).message).toMatch(/^Unknown option "window" for memoryIdempotency\./);
    expect(configurationError(() => dynamoIdempotency({ tableName: 't', table: 'x' } as never)).message).toMatch(/^Unknown option "table" for dynamoIdempotency\./);
  });

  it.each([undefined, {}, { tableName: '' }, { tableName: 42 }])('dynamoIdempotency refuses %j without a table name', (options) => {
    const error = configurationError(() => dynamoIdempotency(options as never));
    expect(error.option).toBe('tableName');
    expect(error.message).toBe('dynamoIdempotency needs `tableName`: a table with the partition key `id` (String).');
  });
});

describe('memoryIdempotency: the sweep of expired keys', () => {
  it('every 1000th begin sweeps the expired keys and keeps the running and the done ones', async () => {
    const store = memoryIdempotency();
    const running = await started(store, 'running', 60_000);
    const done = await started(store, 'done', 60_000);
    await store.complete('done', done);
    // 2 begins above, 1998 here: sweeps at the 1000th and the 2000th, before the looks below.
    for (let index = 0; index < 1998; index += 1) await started(store, `short-${index}`, 1);
    expect(await store.begin('running', 60_000)).toEqual({ state: 'busy' });
    expect(await store.begin('done', 60_000)).toEqual({ state: 'done' });
    await store.release('running', running);
    expect((await store.begin('running', 60_000)).state).toBe('started');
  });

  it('forgets expired keys: the sweep frees what 100 000 leases that ran out held', async () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    const heap = () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    const store = memoryIdempotency();
    // The clock stands still while the leases are taken, so no sweep on the way finds one expired; measured
    // before and after the one sweep, not from the start: a heap the run inherited cannot blur it.
    const T = Date.now();
    const at = clockAt(T);
    for (let index = 0; index < 100_000; index += 1) await store.begin(`lease-${index}`, 1000);
    const held = heap();
    at(T + 1000);
    // The 101 000th begin sweeps every lease above: they all ran out.
    for (let index = 0; index < 1000; index += 1) await store.begin(`last-${index}`, 60_000);
    // Kept, the 100 000 keys, tokens and marks are some 23 MB (the stores' lease tokens, shorter than the UUIDs
    // they were, since the kit); a store that never sweeps frees nothing of them.
    expect(held - heap()).toBeGreaterThan(12 * 1024 * 1024);
  });
});

describe('dynamoIdempotency: the running item', () => {
  it('holds its lease\'s end in ms and a TTL (s) a window after it: a run completed late is still remembered', async () => {
    const tableName = await newTable();
    const store = dynamoIdempotency({ tableName, client: dynamo.client, windowMs: 5000 });
    const T = Date.now();
    clockAt(T);
    // A lease of seconds: the TTL, rounded up to one, tells `now + lease + window` from `now - lease + window`.
    const token = await started(store, 'k', 3000);
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'k' } }, ConsistentRead: true }));
    expect(Item).toEqual({ id: { S: 'k' }, state: { S: 'running' }, token: { S: token }, until: { N: String(T + 3000) }, expiresAt: { N: String(Math.ceil((T + 8000) / 1000)) } });
  });
});

describe('dynamoIdempotency: DynamoDB answering otherwise', () => {
  it('an item released between the refused write and the read is busy (tried again), not an error', async () => {
    const tableName = await newTable();
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
    // The other run's release, landing after this begin's PutItem was refused and before its GetItem.
    client.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as { Key?: unknown }).Key && !(args.input as { ConditionExpression?: unknown }).ConditionExpression) {
          await dynamo.client.send(new DeleteItemCommand({ TableName: tableName, Key: { id: { S: 'k' } } }));
        }
        return next(args);
      },
      { step: 'initialize', name: 'releasedMeanwhile' },
    );
    try {
      const other = dynamoIdempotency({ tableName, client: dynamo.client });
      await started(other, 'k', 60_000);
      const store = dynamoIdempotency({ tableName, client });
      expect(await store.begin('k', 60_000)).toEqual({ state: 'busy' });
      const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'k' } }, ConsistentRead: true }));
      expect(Item).toBeUndefined();
    } finally {
      client.destroy();
    }
  });

  it('a write refused for another reason than its condition rejects begin, and nothing is read', async () => {
    const tableName = await newTable();
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
    const sent: string[] = [];
    // A role allowed to read the table but not to write it: DynamoDB's AccessDeniedException, before any request.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        if (context.commandName === 'PutItemCommand') {
          throw Object.assign(new Error('User is not authorized to perform: dynamodb:PutItem'), { name: 'AccessDeniedException', $fault: 'client' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'readOnlyRole' },
    );
    try {
      const store = dynamoIdempotency({ tableName, client });
      await expect(store.begin('k', 1000)).rejects.toThrow('User is not authorized to perform: dynamodb:PutItem');
      expect(sent).toEqual(['PutItemCommand']);
    } finally {
      client.destroy();
    }
  });

  it('complete and release on a table that does not exist reject (the record goes back to SQS)', async () => {
    const store = dynamoIdempotency({ tableName: 'missing', client: dynamo.client });
    await expect(store.complete('k', 'token')).rejects.toThrow(/non-existent table|not found|ResourceNotFound/i);
    await expect(store.release('k', 'token')).rejects.toThrow(/non-existent table|not found|ResourceNotFound/i);
  });

  it('without a client, makes one from the environment (region, credentials, endpoint)', async () => {
    const tableName = await newTable();
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', dynamo.endpoint);
    const store = dynamoIdempotency({ tableName });
    const token = await started(store, 'k', 60_000);
    expect(await store.begin('k', 60_000)).toEqual({ state: 'busy' });
    await store.complete('k', token);
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'k' } }, ConsistentRead: true }));
    expect(Item?.state).toEqual({ S: 'done' });
  });
});
