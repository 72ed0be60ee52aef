/**
 * `sqsQueue({ queueUrl })`: an Inbox whose store is an SQS queue, for a receiver that only receives:
 * `createWebhooks({ auth, inbox: sqsQueue({ queueUrl }), consume: false })`. A put resolves once SQS
 * acknowledged the message, so the 200 means the event is in the queue; a failed or late send is answered 503
 * + Retry-After. Its worker side is SQS's own (`sqsHandler` in a consumer function): claims are refused.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError, rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type Inbox, type InboxStats, type PutResult } from '../../src/delivery/index.js';
import { type ParsedWebhook } from '../../src/events/index.js';
import { clientOf, loadSqs } from './sdk.js';
import { SendBatches } from './send-batches.js';
import { DEFAULT_MAX_MESSAGE_BYTES, defaultGroupId, toMessage } from './sqs-message.js';

export interface SqsQueueOptions {
  /** The queue's URL. One ending in `.fifo` is a FIFO queue: messages get deduplication and group ids. */
  queueUrl: string;
  /** A client of your own (region, credentials, retries); default `new SQSClient({})`, from the environment. */
  client?: SQSClient;
  /**
   * FIFO only: the message group of an event (events of one group are consumed in order, groups in parallel).
   * @defaultValue the conversation id where the event has one (messages, groups, calls), else the trigger
   */
  groupId?: (event: ParsedWebhook) => string;
  /**
   * The largest message the queue takes, in bytes: set it to the queue's `MaximumMessageSize`. Larger events
   * are refused (413) and reported to onError with their raw body.
   * @defaultValue 262144 (256 KiB)
   */
  maxMessageBytes?: number;
}

const NOTHING: InboxStats = Object.freeze({ pending: 0, running: 0, done: 0, dead: 0 });

/**
 * The receiver's inbox on SQS (receive only): a delivery is answered 200 once SQS acknowledged its message.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { sqsQueue } from 'chat-webhooks/aws';
 * import { lambdaHandler } from 'chat-webhooks/lambda';
 *
 * const receiving = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! }, inbox: sqsQueue({ queueUrl: process.env.QUEUE_URL! }), consume: false });
 * export const handler = lambdaHandler(receiving);
 * ```
 */
export function sqsQueue(options: SqsQueueOptions): Inbox {
  checkOptions(options);
  const { queueUrl, groupId = defaultGroupId, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES } = options;
  const fifo = queueUrl.endsWith('.fifo') ? { groupId } : undefined;
  const client = clientOf(options.client, () => loadSqs().then(({ SQSClient }) => new SQSClient({})));
  // A batch may hold as much as one message may (SQS's rule), never less than its default 256 KiB.
  const batches = new SendBatches(queueUrl, client, Math.max(DEFAULT_MAX_MESSAGE_BYTES, maxMessageBytes));
  let ids = 0;
  return {
    kind: 'sqs',
    durable: true,
    async put(entry): Promise<PutResult> {
      // The id only tells the entries of one batch apart (a count reaching 2^53 would take centuries of puts).
      const { message, bytes } = toMessage(entry, `m${(ids += 1)}`, fifo, maxMessageBytes);
      await batches.send(message, bytes);
      return 'stored';
    },
    claim: () =>
      Promise.reject(
        new Error('sqsQueue only receives: create the receiver with `consume: false`, and run the handlers with sqsHandler in a function the queue triggers.'),
      ),
    renew: async () => false,
    complete: async () => undefined,
    fail: async () => undefined,
    stats: async () => NOTHING,
    list: async () => [],
    retry: async () => 0,
    purge: async () => 0,
    async close() {
      // Only a client made here is ours to destroy; one that could not be made (the SDK is not installed) has
      // nothing to close, and its failure was each put's to report: close() must not reject with it again.
      if (!options.client) (await client.catch(() => undefined))?.destroy();
    },
  };
}

function checkOptions(options: SqsQueueOptions): void {
  rejectUnknownOptions('sqsQueue', options, ['queueUrl', 'client', 'groupId', 'maxMessageBytes']);
  const { queueUrl, groupId, maxMessageBytes } = options ?? {};
  if (typeof queueUrl !== 'string' || !/^https?:\/\//.test(queueUrl)) {
    throw new ConfigurationError('queueUrl', '`queueUrl` must be the queue\'s URL: https://sqs.<region>.amazonaws.com/<account>/<name>.');
  }
  if (groupId !== undefined && typeof groupId !== 'function') {
    throw new ConfigurationError('groupId', '`groupId` must be a function (event) => string.');
  }
  if (groupId !== undefined && !queueUrl.endsWith('.fifo')) {
    throw new ConfigurationError('groupId', '`groupId` applies to FIFO queues only (a URL ending in .fifo).');
  }
  if (maxMessageBytes !== undefined && !(Number.isSafeInteger(maxMessageBytes) && maxMessageBytes >= 1024)) {
    throw new ConfigurationError('maxMessageBytes', '`maxMessageBytes` must be a whole number of bytes, at least 1024.');
  }
}
