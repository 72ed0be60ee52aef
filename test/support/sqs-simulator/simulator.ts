/**
 * SQS, simulated: there is no SQS to run on these machines (no moto, ElasticMQ or LocalStack), so the tests
 * talk through the real `@aws-sdk/client-sqs` (its JSON protocol, signing, retries and MD5 checks) to this
 * local HTTP endpoint. It answers SendMessage(Batch), ReceiveMessage, DeleteMessage(Batch),
 * ChangeMessageVisibility and GetQueueAttributes as SQS documents them, over queues (./queue.ts) that keep
 * SQS's behaviour: visibility timeouts, receive counts, redrive to a dead-letter queue, FIFO's deduplication
 * and group order. What it cannot show (IAM, throttling, the real service's timing, at-least-once duplicates
 * of standard queues) is listed in docs/operations.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { realClock, type Clock } from './clock.js';
import { SimulatedQueue, type QueueOptions, type SentEntry } from './queue.js';
import { answer, type Input } from './actions.js';
import { SqsFault } from './wire.js';

/** What the endpoint does with the next requests: answer, fail (HTTP 500), or never answer. */
export type Behaviour = 'answer' | 'fail' | 'hang';

/** One simulator for a test file, started before its tests and stopped after them: `const sqs = sqsSimulatorPerSuite();`. */
export function sqsSimulatorPerSuite(clock?: Clock): SqsSimulator {
  const sqs = new SqsSimulator(clock);
  beforeAll(async () => {
    await sqs.start();
  });
  afterAll(() => sqs.stop());
  return sqs;
}

export class SqsSimulator {
  readonly queues = new Map<string, SimulatedQueue>();
  /** Every call, as the SDK sent it. */
  readonly calls: Array<{ target: string; input: Input }> = [];
  behaviour: Behaviour = 'answer';
  /** SendMessageBatch's partial failures, on demand: entries answered as Failed (SenderFault false) instead of sent. */
  refuse: (entry: SentEntry) => boolean = () => false;
  origin = '';
  #server: Server | undefined;
  #hanging: ServerResponse[] = [];

  constructor(readonly clock: Clock = realClock()) {}

  async start(): Promise<this> {
    this.#server = createServer((request, response) => void this.#serve(request, response));
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }

  /**
   * A queue (a name ending in .fifo makes a FIFO queue) with its dead-letter queue (`<name>-dlq`, reachable
   * too), moved to after `maxReceiveCount` receives.
   */
  queue(name: string, maxReceiveCount = 3, options: Omit<QueueOptions, 'maxReceiveCount' | 'deadLetter'> = {}): SimulatedQueue {
    const deadLetter = new SimulatedQueue(this.#url(name.replace(/(\.fifo)?$/, '-dlq$1')), this.clock, options);
    const queue = new SimulatedQueue(this.#url(name), this.clock, { ...options, maxReceiveCount, deadLetter });
    this.queues.set(deadLetter.url, deadLetter);
    this.queues.set(queue.url, queue);
    return queue;
  }

  #url(name: string): string {
    return `${this.origin}/123456789012/${name}`;
  }

  /** A real SDK client for this endpoint (no retry delays worth waiting for; dummy credentials). */
  client(): SQSClient {
    return new SQSClient({
      endpoint: this.origin,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 2,
    });
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Input;
    this.calls.push({ target, input });
    if (this.behaviour === 'hang') return void this.#hanging.push(response);
    try {
      if (this.behaviour === 'fail') throw new SqsFault('InternalError', 'We encountered an internal error. Please try again.', 500);
      if (!request.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) throw new SqsFault('MissingAuthenticationToken', 'Request is missing Authentication Token', 403);
      const queue = this.queues.get(input.QueueUrl);
      if (!queue) throw new SqsFault('QueueDoesNotExist', 'The specified queue does not exist.');
      reply(response, 200, answer(target, input, queue, this.refuse));
    } catch (error) {
      const fault = error instanceof SqsFault ? error : new SqsFault('InternalError', String(error), 500);
      response.setHeader('x-amzn-query-error', `${fault.queryCode};${fault.status < 500 ? 'Sender' : 'Receiver'}`);
      reply(response, fault.status, { __type: `com.amazonaws.sqs#${fault.code}`, message: fault.message });
    }
  }
}

function reply(response: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID(), 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
