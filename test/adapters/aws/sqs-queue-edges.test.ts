/**
 * sqsQueue at its edges: every option refused with its sentence, the limits taken at their ends, the batch
 * limit when maxMessageBytes is below SQS's default, the inbox methods a receive-only queue answers, and which
 * client close() destroys. Through the real @aws-sdk/client-sqs to the SQS simulator (test/support/sqs-simulator/).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sqsQueue, type SqsQueueOptions } from '../../../adapters/aws/index.js';
import { ConfigurationError, idempotencyKey, type InboxEntry } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { sqsSimulatorPerSuite } from '../../support/sqs-simulator/index.js';

const sqs = sqsSimulatorPerSuite();

let names = 0;
let ids = 0;
const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/events';

/** An entry of about `bytes` bytes (toMessage reads the raw body, not the event, but for the group). */
function sized(bytes: number): InboxEntry {
  return { ...entry(), rawBody: JSON.stringify({ trigger: 'message_sent', pad: 'p'.repeat(bytes - 34) }) };
}

function entry(text = 'hello'): InboxEntry {
  const event = createTestEvent('message_sent', { data: { message: { id: String(++ids), data: { text } } } });
  const rawBody = JSON.stringify(event);
  return { key: idempotencyKey(event, rawBody), trigger: event.trigger, event, rawBody, receivedAt: Date.now() };
}

/** The ConfigurationError sqsQueue throws for these options, as [option, message]. */
function refusal(options: unknown): [string, string] | undefined {
  try {
    sqsQueue(options as SqsQueueOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return [(error as ConfigurationError).option, (error as Error).message];
  }
  return undefined;
}

describe('sqsQueue options', () => {
  const noUrl = ['queueUrl', "`queueUrl` must be the queue's URL: https://sqs.<region>.amazonaws.com/<account>/<name>."];

  it('queueUrl: an http(s) URL, from its first character', () => {
    for (const queueUrl of [undefined, 42, '', 'events', 'ftp://sqs/events', 'https:/sqs/events', ' https://sqs/events', 'sqs https://x', 'HTTPS://sqs/events']) {
      expect(refusal({ queueUrl }), String(queueUrl)).toEqual(noUrl);
    }
    expect(refusal(undefined)).toEqual(noUrl);
    // A URL object reads as one, but is not the string the rest of the options are checked against.
    expect(refusal({ queueUrl: new URL(QUEUE_URL) })).toEqual(noUrl);
    for (const queueUrl of [QUEUE_URL, 'http://127.0.0.1:4566/1/events', 'https://x']) expect(refusal({ queueUrl }), queueUrl).toBeUndefined();
  });

  it('groupId: a function, and for a FIFO queue only', () => {
    const fifo = `${QUEUE_URL}.fifo`;
    for (const groupId of ['g', 7, null, {}]) {
      expect(refusal({ queueUrl: fifo, groupId }), String(groupId)).toEqual(['groupId', '`groupId` must be a function (event) => string.']);
    }
    expect(refusal({ queueUrl: QUEUE_URL, groupId: () => 'g' })).toEqual(['groupId', '`groupId` applies to FIFO queues only (a URL ending in .fifo).']);
    expect(refusal({ queueUrl: `${QUEUE_URL}.fifo.bak`, groupId: () => 'g' })?.[0]).toBe('groupId');
    expect(refusal({ queueUrl: fifo, groupId: () => 'g' })).toBeUndefined();
    expect(refusal({ queueUrl: QUEUE_URL, groupId: undefined })).toBeUndefined();
  });

  it('maxMessageBytes: a whole number from 1024', () => {
    const refused = ['maxMessageBytes', '`maxMessageBytes` must be a whole number of bytes, at least 1024.'];
    for (const maxMessageBytes of [1023, 0, -1, 1024.5, '2048', NaN, Infinity, 2 ** 53, null]) {
      expect(refusal({ queueUrl: QUEUE_URL, maxMessageBytes }), String(maxMessageBytes)).toEqual(refused);
    }
    for (const maxMessageBytes of [1024, 262_144, 2 ** 53 - 1, undefined]) expect(refusal({ queueUrl: QUEUE_URL, maxMessageBytes }), String(maxMessageBytes)).toBeUndefined();
  });

  it('an unknown option is named, with the known ones', () => {
    expect(refusal({ queueUrl: QUEUE_URL, region: 'eu-west-1' })).toEqual([
      'region',
      expect.stringMatching(/^Unknown option "region" for sqsQueue\..* Known options: queueUrl, client, groupId, maxMessageBytes\.$/),
    ]);
  });
});

describe('sqsQueue limits', () => {
  it('maxMessageBytes 1024 refuses a larger event, but batches still hold SQS\'s 256 KiB: three 700-byte events in one call', async () => {
    const queue = sqs.queue(`edges-${++names}`);
    const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client(), maxMessageBytes: 1024 });
    // Two of them are more than 1024 bytes: a batch limit of maxMessageBytes would send three calls.
    const small = [sized(700), sized(700), sized(700)];
    expect(await Promise.all(small.map((e) => inbox.put(e)))).toEqual(['stored', 'stored', 'stored']);
    expect(sqs.calls.filter((call) => call.input.QueueUrl === queue.url).map((call) => call.input.Entries?.length)).toEqual([3]);
    await expect(inbox.put(sized(1024))).rejects.toMatchObject({ code: 'payload_too_large', message: expect.stringMatching(/limit of 1024 bytes/) });
  });

  it('the entries of one batch have distinct ids', async () => {
    const queue = sqs.queue(`edges-${++names}`);
    const inbox = sqsQueue({ queueUrl: queue.url, client: sqs.client() });
    await Promise.all(Array.from({ length: 10 }, () => inbox.put(entry())));
    const [call] = sqs.calls.filter((c) => c.input.QueueUrl === queue.url);
    expect(new Set(call?.input.Entries?.map((e) => e.Id)).size).toBe(10);
  });
});

describe('sqsQueue: what a receive-only inbox answers', () => {
  it('kind sqs, durable; nothing to renew, list, retry or purge; no stats; claims refused with the way to consume', async () => {
    const inbox = sqsQueue({ queueUrl: sqs.queue(`edges-${++names}`).url, client: sqs.client() });
    expect([inbox.kind, inbox.durable]).toEqual(['sqs', true]);
    expect(await inbox.renew({} as never, 1000)).toBe(false);
    expect(await inbox.complete({} as never)).toBeUndefined();
    expect(await inbox.fail({} as never, { retryAt: 0 } as never)).toBeUndefined();
    const stats = await inbox.stats();
    expect(stats).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    expect(Object.isFrozen(stats)).toBe(true);
    expect(await inbox.list({} as never)).toEqual([]);
    expect(await inbox.retry({} as never)).toBe(0);
    expect(await inbox.purge({} as never)).toBe(0);
    await expect(inbox.claim({ leaseMs: 1000, waitMs: 0 })).rejects.toThrow(
      'sqsQueue only receives: create the receiver with `consume: false`, and run the handlers with sqsHandler in a function the queue triggers.',
    );
  });
});

describe('sqsQueue close()', () => {
  it('leaves a client of your own as it was', async () => {
    const queue = sqs.queue(`edges-${++names}`);
    const client = sqs.client();
    let destroyed = 0;
    const destroy = client.destroy.bind(client);
    client.destroy = () => {
      destroyed += 1;
      destroy();
    };
    const inbox = sqsQueue({ queueUrl: queue.url, client });
    await inbox.put(entry());
    await inbox.close?.();
    expect(destroyed).toBe(0);
    client.destroy();
  });

  it('without a client, makes one from the environment, sends through it, and destroys it on close: its connection ends', async () => {
    // SQS of its own (the SDK sends to the queue URL's host): it counts the client's open connections.
    let open = 0;
    const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entries = JSON.parse(Buffer.concat(chunks).toString('utf8')).Entries as Array<{ Id: string; MessageBody: string }>;
        const text = JSON.stringify({ Successful: entries.map((e) => ({ Id: e.Id, MessageId: `id-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] });
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
        response.end(text);
      });
    });
    server.on('connection', (socket) => {
      open += 1;
      socket.on('close', () => (open -= 1));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_ENDPOINT_URL_SQS: origin });
    try {
      const inbox = sqsQueue({ queueUrl: `${origin}/123456789012/events` });
      expect(await inbox.put(entry())).toBe('stored');
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Kept alive for the next send, until the client is destroyed.
      expect(open).toBe(1);
      await inbox.close?.();
      for (let wait = 0; wait < 100 && open > 0; wait += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(open).toBe(0);
    } finally {
      process.env = saved;
      server.closeAllConnections();
      server.close();
    }
  });
});
