/**
 * SendBatches, the receiver's way to SQS: the puts of one turn in SendMessageBatch calls of at most 10 entries
 * and `maxBatchBytes`, each put settled by its own entry in the answer. Through the real @aws-sdk/client-sqs
 * to the SQS simulator (test/support/sqs-simulator/); the answers it never gives (an entry missing, a list left out)
 * come from a scripted endpoint below, answering as SQS's JSON protocol does.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SendBatches } from '../../../adapters/aws/send-batches.js';
import { sqsSimulatorPerSuite, type SimulatedQueue as Queue } from '../../support/sqs-simulator/index.js';

const LIMIT = 256 * 1024;
const sqs = sqsSimulatorPerSuite();

let names = 0;
let ids = 0;
const entry = (body: string): SendMessageBatchRequestEntry => ({ Id: `m${++ids}`, MessageBody: body });
const sizes = (queue: Queue) => sqs.calls.filter((call) => call.input.QueueUrl === queue.url).map((call) => call.input.Entries?.length);
const sendAll = (batches: SendBatches, bodies: string[]) => Promise.all(bodies.map((body) => batches.send(entry(body), Buffer.byteLength(body))));

describe('SendBatches against the SQS endpoint', () => {
  it('the puts of one turn share a call; a put of a later turn makes a call of its own', async () => {
    const queue = sqs.queue(`batches-${++names}`);
    const batches = new SendBatches(queue.url, Promise.resolve(sqs.client()), LIMIT);
    await sendAll(batches, ['a', 'b', 'c']);
    await sendAll(batches, ['d']);
    expect(sizes(queue)).toEqual([3, 1]);
    expect(queue.messages.map((message) => message.body)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('each call counts its bytes from nothing: five messages of 100 KiB are calls of 2, 2 and 1', async () => {
    const queue = sqs.queue(`batches-${++names}`);
    const batches = new SendBatches(queue.url, Promise.resolve(sqs.client()), LIMIT);
    await sendAll(batches, Array.from({ length: 5 }, (_, index) => String(index).repeat(100 * 1024)));
    expect(sizes(queue)).toEqual([2, 2, 1]);
    expect(queue.messages).toHaveLength(5);
  });

  it('a call may hold exactly maxBatchBytes: two messages of half of it go together', async () => {
    const queue = sqs.queue(`batches-${++names}`);
    const batches = new SendBatches(queue.url, Promise.resolve(sqs.client()), LIMIT);
    await sendAll(batches, ['x'.repeat(LIMIT / 2), 'y'.repeat(LIMIT / 2)]);
    expect(sizes(queue)).toEqual([2]);
    const third = new SendBatches(queue.url, Promise.resolve(sqs.client()), LIMIT);
    await sendAll(third, ['x'.repeat(LIMIT / 2), 'y'.repeat(LIMIT / 2 + 1)]);
    expect(sizes(queue)).toEqual([2, 1, 1]);
  });

  it('an entry SQS refuses rejects with its code and message; the others of its call resolve', async () => {
    const queue = sqs.queue(`batches-${++names}`);
    const batches = new SendBatches(queue.url, Promise.resolve(sqs.client()), LIMIT);
    sqs.refuse = (sent) => sent.MessageBody === 'refuse me';
    try {
      const results = await Promise.allSettled(['a', 'refuse me', 'b'].map((body) => batches.send(entry(body), body.length)));
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason.message).toBe('SQS did not take the message: InternalError: Try again.');
    } finally {
      sqs.refuse = () => false;
    }
  });

  it('a client that could not be made rejects each put with its cause, and nothing is sent', async () => {
    const cause = new Error('no SDK here');
    const made = Promise.reject(cause);
    made.catch(() => undefined);
    const batches = new SendBatches(`${sqs.origin}/123456789012/nowhere`, made, LIMIT);
    const results = await Promise.allSettled([batches.send(entry('a'), 1), batches.send(entry('b'), 1)]);
    expect(results).toEqual([
      { status: 'rejected', reason: cause },
      { status: 'rejected', reason: cause },
    ]);
    expect(sqs.calls.filter((call) => call.input.QueueUrl.endsWith('/nowhere'))).toEqual([]);
  });
});

type Answer = (entries: SendMessageBatchRequestEntry[]) => { Successful?: object[]; Failed?: object[] };
const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const success = (sent: SendMessageBatchRequestEntry) => ({ Id: sent.Id, MessageId: `id-${sent.Id}`, MD5OfMessageBody: md5(sent.MessageBody as string) });
const failure = (sent: SendMessageBatchRequestEntry) => ({ Id: sent.Id, SenderFault: false, Code: 'ServiceUnavailable', Message: 'Later.' });

/** An endpoint answering SendMessageBatch with `answer(entries)`, nothing more. */
async function scripted(answer: Answer): Promise<{ batches: SendBatches; stop: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString('utf8')).Entries));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, maxAttempts: 1 });
  return {
    batches: new SendBatches(`${endpoint}/123456789012/scripted`, Promise.resolve(client), LIMIT),
    stop: async () => {
      client.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('SendBatches reading answers the endpoint never gives', () => {
  it('an entry missing from both lists rejects, saying so; the listed ones resolve', async () => {
    const { batches, stop } = await scripted((entries) => ({ Successful: entries.slice(1).map(success), Failed: [] }));
    try {
      const results = await Promise.allSettled([batches.send(entry('a'), 1), batches.send(entry('b'), 1)]);
      expect(results[0]).toMatchObject({ status: 'rejected', reason: { message: 'SQS did not take the message: it is missing from the answer.' } });
      expect(results[1]).toEqual({ status: 'fulfilled', value: undefined });
    } finally {
      await stop();
    }
  });

  it('an answer without a Failed list: every entry listed as sent resolves', async () => {
    const { batches, stop } = await scripted((entries) => ({ Successful: entries.map(success) }));
    try {
      await expect(Promise.all([batches.send(entry('a'), 1), batches.send(entry('b'), 1)])).resolves.toEqual([undefined, undefined]);
    } finally {
      await stop();
    }
  });

  it('an answer without a Successful list: every entry rejects with its own failure', async () => {
    const { batches, stop } = await scripted((entries) => ({ Failed: entries.map(failure) }));
    try {
      const results = await Promise.allSettled([batches.send(entry('a'), 1), batches.send(entry('b'), 1)]);
      expect(results.map((result) => (result as PromiseRejectedResult).reason?.message)).toEqual([
        'SQS did not take the message: ServiceUnavailable: Later.',
        'SQS did not take the message: ServiceUnavailable: Later.',
      ]);
    } finally {
      await stop();
    }
  });
});
