/**
 * `dynamoIdempotency({ tableName })`: the consumer's idempotency store in a DynamoDB table, shared by every
 * container of the consumer function. The table: partition key `id` (String), TTL on `expiresAt`. Each key is
 * one item `{ id, state: 'running' | 'done', token, until (ms), expiresAt (s) }`, written with conditions so
 * that two containers never both start the same key.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConfigurationError, rejectUnknownOptions } from '../../src/dispatch/index.js';
import { checkWindow, newToken, type Begin, type IdempotencyStore } from './idempotency.js';
import { clientOf, loadDynamo } from './sdk.js';

export interface DynamoIdempotencyOptions {
  /** The table: partition key `id` (String); turn TTL on for the attribute `expiresAt`. */
  tableName: string;
  /** A client of your own; default `new DynamoDBClient({})`, from the environment. */
  client?: DynamoDBClient;
  /** How long a completed key is remembered. @defaultValue 86400000 (24 hours) */
  windowMs?: number;
}

// Every attribute through a placeholder: `state` and `token` are among DynamoDB's reserved words.
const NAMES = { '#id': 'id', '#state': 'state', '#token': 'token', '#until': 'until', '#expiresAt': 'expiresAt' };

const n = (value: number): AttributeValue => ({ N: String(value) });
const s = (value: string): AttributeValue => ({ S: value });
/** The TTL attribute, in seconds as DynamoDB's TTL wants it; code compares `until`, TTL only cleans up. */
const expiry = (until: number): AttributeValue => n(Math.ceil(until / 1000));

// What it is given is a rejection of the SDK's `send`: always an Error (a ServiceException or a network failure).
const isConditionFailure = (cause: unknown) => (cause as Error).name === 'ConditionalCheckFailedException';

/**
 * The idempotency store of `sqsHandler` in a DynamoDB table: each key's handlers run once across
 * redeliveries and containers.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { dynamoIdempotency, sqsHandler } from 'chat-webhooks/aws';
 *
 * const webhooks = createWebhooks({ auth: false }).on('message_sent', async (event) => console.log(event.data.message.id));
 * export const consume = sqsHandler(webhooks, { idempotency: dynamoIdempotency({ tableName: process.env.TABLE_NAME! }) });
 * ```
 */
export function dynamoIdempotency(options: DynamoIdempotencyOptions): IdempotencyStore {
  rejectUnknownOptions('dynamoIdempotency', options, ['tableName', 'client', 'windowMs']);
  const { tableName } = options ?? {};
  if (typeof tableName !== 'string' || tableName === '') {
    throw new ConfigurationError('tableName', 'dynamoIdempotency needs `tableName`: a table with the partition key `id` (String).');
  }
  const windowMs = checkWindow('dynamoIdempotency', options.windowMs);
  const client = clientOf(options.client, () => loadDynamo().then(({ DynamoDBClient }) => new DynamoDBClient({})));
  const sdk = () => Promise.all([loadDynamo(), client]);

  return {
    async begin(key, leaseMs): Promise<Begin> {
      const [{ PutItemCommand, GetItemCommand }, dynamo] = await sdk();
      const now = Date.now();
      const token = newToken();
      try {
        await dynamo.send(
          new PutItemCommand({
            TableName: tableName,
            Item: { id: s(key), state: s('running'), token: s(token), until: n(now + leaseMs), expiresAt: expiry(now + leaseMs + windowMs) },
            // New, or its lease or window is over (TTL may not have removed it yet).
            ConditionExpression: 'attribute_not_exists(#id) OR #until <= :now',
            ExpressionAttributeNames: { '#id': NAMES['#id'], '#until': NAMES['#until'] },
            ExpressionAttributeValues: { ':now': n(now) },
          }),
        );
        return { state: 'started', token };
      } catch (cause) {
        if (!isConditionFailure(cause)) throw cause;
      }
      const { Item } = await dynamo.send(new GetItemCommand({ TableName: tableName, Key: { id: s(key) }, ConsistentRead: true }));
      // Gone meanwhile (released by its run): busy for now, so the record is simply tried again.
      return Item?.state!.S === 'done' ? { state: 'done' } : { state: 'busy' };
    },

    async complete(key, token) {
      const [{ UpdateItemCommand }, dynamo] = await sdk();
      const until = Date.now() + windowMs;
      await ignoringLostLease(
        dynamo.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { id: s(key) },
            UpdateExpression: 'SET #state = :done, #until = :until, #expiresAt = :expiresAt',
            ConditionExpression: '#token = :token',
            ExpressionAttributeNames: { '#state': NAMES['#state'], '#until': NAMES['#until'], '#expiresAt': NAMES['#expiresAt'], '#token': NAMES['#token'] },
            ExpressionAttributeValues: { ':done': s('done'), ':until': n(until), ':expiresAt': expiry(until), ':token': s(token) },
          }),
        ),
      );
    },

    async release(key, token) {
      const [{ DeleteItemCommand }, dynamo] = await sdk();
      await ignoringLostLease(
        dynamo.send(
          new DeleteItemCommand({
            TableName: tableName,
            Key: { id: s(key) },
            ConditionExpression: '#token = :token AND #state = :running',
            ExpressionAttributeNames: { '#token': NAMES['#token'], '#state': NAMES['#state'] },
            ExpressionAttributeValues: { ':token': s(token), ':running': s('running') },
          }),
        ),
      );
    },
  };
}

/** A write conditioned on our token fails once another run took the key over: that run decides, not this one. */
async function ignoringLostLease(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (cause) {
    if (!isConditionFailure(cause)) throw cause;
  }
}
