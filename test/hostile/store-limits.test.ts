/**
 * What the stores refuse, sent by the platform's side (issue 33, item 10): ids so long that a key escaped from
 * them is past what a store indexes (PostgreSQL's primary key takes 2704 bytes, DynamoDB's partition key
 * 2048), and text PostgreSQL's `text` refuses (NUL) in what an inbox writes besides the key: the trigger of an
 * unknown event, a handler's error message. On PostgreSQL a put is one statement for a turn's events, so one
 * such event made every event of its turn 503. Each event here is handled once, and its repeat is one.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dynamoIdempotency, sqsHandler, sqsQueue } from '../../adapters/aws/index.js';
import { createWebhooks, idempotencyKey, memoryInbox, parseWebhook, type Inbox, type WebhookError, type Webhooks } from '../../src/index.js';
import { postgresInbox } from '../../src/stores/postgres/index.js';
import { redisInbox } from '../../src/stores/redis/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { MAX_KEY_BYTES } from '../../src/receive/idempotency.js';
import { buildRequest } from '../../src/testing/index.js';
import { startDynalite } from '../adapters/aws/dynalite.js';
import { deliver, SqsSimulator } from '../support/sqs-simulator/index.js';
import { postgresDatabase } from '../support/postgres-server.js';
import { redisPerSuite } from '../support/redis-server.js';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8')) as {
  appId?: string;
  webhook: string;
  data: { message: { id: string; data: { text: string } } };
};

/** A message_sent with this id (and text: other bytes, the same event). */
function delivery(id: string, text = 'hello', webhook = fixture.webhook): string {
  const body = structuredClone(fixture);
  body.webhook = webhook;
  body.data.message.id = id;
  body.data.message.data.text = text;
  return JSON.stringify(body);
}

/** Ids past every store's limit once escaped: random (PostgreSQL cannot compress it), all colons, 270 kB. */
const LONG_IDS: Record<string, string> = {
  'a random 2.7 kB id': randomBytes(2000).toString('base64'),
  '100 000 colons (300 kB escaped)': ':'.repeat(100_000),
  'a random 270 kB id': randomBytes(200_000).toString('base64'),
};

const dir = mkdtempSync(join(tmpdir(), 'store-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redis = redisPerSuite();
const database = postgresDatabase();
let serial = 0;

const INBOXES: Record<string, () => Inbox> = {
  memoryInbox: () => memoryInbox(),
  sqliteInbox: () => sqliteInbox({ path: join(dir, `inbox-${++serial}.sqlite`) }),
  redisInbox: () => redisInbox({ url: redis.server.url, prefix: `limits-${++serial}`, pollMs: 10 }),
  postgresInbox: () => postgresInbox({ connectionString: database.url, schema: `limits_${process.pid}_${++serial}` }),
};

const open: Webhooks[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((webhooks) => webhooks.close()));
});

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A receiver on `inbox` with its in-process worker, recording what reached which handler. */
function receiver(inbox: Inbox, retry = { attempts: 3 }) {
  const webhooks = createWebhooks({ auth: false, logger: {}, inbox, worker: { retry, leaseMs: 60_000 } });
  open.push(webhooks);
  const handled: Array<{ id: string; key: string }> = [];
  const unknown: string[] = [];
  const duplicates: string[] = [];
  const errors: WebhookError[] = [];
  webhooks.on('message_sent', (event, { key }) => void handled.push({ id: event.data.message.id, key }));
  webhooks.onUnknown((event) => void unknown.push(event.trigger));
  webhooks.onDuplicate((_event, { key }) => void duplicates.push(key));
  webhooks.onError((error) => void errors.push(error));
  /** The statuses of bodies sent in one turn: PostgreSQL commits them in one statement. */
  const send = async (...bodies: string[]) => {
    const responses = await Promise.all(bodies.map((body) => webhooks.handle(buildRequest(body, {}))));
    return responses.map((response) => response.status);
  };
  return { webhooks, handled, unknown, duplicates, errors, send };
}

describe.each(Object.keys(INBOXES))('%s: an id past what stores index', (name) => {
  it.each(Object.keys(LONG_IDS))('%s is handled once, beside a usual event of its turn, and its repeat is one', async (idName) => {
    const id = LONG_IDS[idName] as string;
    const { handled, duplicates, errors, send } = receiver((INBOXES[name] as () => Inbox)());
    expect(await send(delivery(id), delivery('1421'))).toEqual([200, 200]);
    await until(() => handled.length === 2);
    const long = handled.find((event) => event.id === id);
    expect(long).toBeDefined();
    expect(Buffer.byteLength(long!.key)).toBeLessThanOrEqual(MAX_KEY_BYTES);
    expect(long!.key.startsWith(`${fixture.appId}:${fixture.webhook}:message_sent:##`)).toBe(true);

    expect(await send(delivery(id, 'hello again'))).toEqual([200]);
    await until(() => duplicates.length === 1);
    expect(duplicates).toEqual([long!.key]);
    expect(handled).toHaveLength(2);
    expect(errors).toEqual([]);
  });
});

describe('keys past the limit', () => {
  it('stay distinct: ids differing in their last character, and a webhook id too long for its prefix to be kept', () => {
    const id = 'x'.repeat(2000);
    const keys = [delivery(`${id}a`), delivery(`${id}b`), delivery('1', 'hello', 'w'.repeat(2000)), delivery('1', 'hello', `${'w'.repeat(2000)}v`)].map(
      (body) => idempotencyKey(parseWebhook(body), body),
    );
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) expect(Buffer.byteLength(key)).toBeLessThanOrEqual(MAX_KEY_BYTES);
    expect(keys[2]?.startsWith('##')).toBe(true);
  });

  it('leave the usual key as it was, and a key of exactly the limit', () => {
    expect(idempotencyKey(parseWebhook(delivery('1421')))).toBe(`${fixture.appId}:${fixture.webhook}:message_sent:1421`);
    const prefix = `${fixture.appId}:${fixture.webhook}:message_sent:`;
    const fits = 'y'.repeat(MAX_KEY_BYTES - prefix.length);
    expect(idempotencyKey(parseWebhook(delivery(fits)))).toBe(prefix + fits);
    expect(idempotencyKey(parseWebhook(delivery(`${fits}y`)))).toMatch(/##[A-Za-z0-9+/]{43}=$/);
  });
});

describe('postgresInbox: text PostgreSQL refuses, from the sender', () => {
  it('an unknown trigger holding NUL is stored and handled, and the usual event of its turn too', async () => {
    const { handled, unknown, errors, send } = receiver(INBOXES.postgresInbox!());
    expect(await send('{"trigger":"poll\\u0000voted","data":{}}', delivery('1421'))).toEqual([200, 200]);
    await until(() => handled.length === 1 && unknown.length === 1);
    expect(unknown).toEqual(['poll\0voted']);
    expect(errors).toEqual([]);
  });

  it('a handler\'s error message holding NUL (quoting the event) is written: the event is dead on its last attempt', async () => {
    const inbox = INBOXES.postgresInbox!();
    const { webhooks, errors, send } = receiver(inbox, { attempts: 1 });
    webhooks.on('message_sent', (event) => {
      throw new Error(`cannot post "${event.data.message.data.text}"`);
    });
    expect(await send(delivery('1421', 'nul\0here'))).toEqual([200]);
    await until(() => errors.length === 1);
    expect(errors[0]?.willRetry).toBe(false);
    // Refused, the write left it running until its lease (a minute) ran out, its error unsaid.
    await until(async () => (await inbox.stats()).dead === 1, 5000);
    const [dead] = await inbox.list({ state: 'dead' });
    expect(dead?.lastError).toContain('cannot post "nul');
  });
});

describe('sqsQueue → sqsHandler with dynamoIdempotency: an id past DynamoDB\'s 2048-byte partition key', () => {
  it('is queued, handled once, and its repeat is one', async () => {
    const [sqs, dynamo] = await Promise.all([new SqsSimulator().start(), startDynalite()]);
    try {
      const queue = sqs.queue('limits');
      const tableName = await dynamo.table('limits');
      const producer = createWebhooks({ auth: false, logger: {}, inbox: sqsQueue({ queueUrl: queue.url, client: sqs.client() }), consume: false });
      open.push(producer);
      const handled: string[] = [];
      const errors: WebhookError[] = [];
      const duplicates: string[] = [];
      const consumerWebhooks = createWebhooks({ auth: false, logger: {} })
        .on('message_sent', (event) => void handled.push(event.data.message.id))
        .onError((error) => void errors.push(error))
        .onDuplicate((_event, { key }) => void duplicates.push(key));
      const consumer = sqsHandler(consumerWebhooks, { idempotency: dynamoIdempotency({ tableName, client: dynamo.client }) });
      const id = LONG_IDS['a random 2.7 kB id'] as string;
      for (const text of ['hello', 'hello again']) {
        expect((await producer.handle(buildRequest(delivery(id, text), {}))).status).toBe(200);
        expect((await deliver(queue, consumer)).failed).toEqual([]);
      }
      expect(handled).toEqual([id]);
      expect(duplicates).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await Promise.all([sqs.stop(), dynamo.stop()]);
    }
  });
});
