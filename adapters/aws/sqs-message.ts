/**
 * One event as one SQS message, both ways: what the receiver sends (the exact raw body, with the idempotency
 * key, trigger, receipt time and trace context as message attributes; FIFO's deduplication and group ids) and
 * what the consumer reads back from a record of Lambda's SQS event.
 */
import { createHash } from 'node:crypto';
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { WebhookError } from '../../src/dispatch/index.js';
import { type InboxEntry } from '../../src/delivery/index.js';
import { type ParsedWebhook } from '../../src/events/index.js';
import type { SqsRecord } from './shapes.js';

/** The message attributes' names. */
export const ATTRIBUTES = {
  key: 'webhook-key',
  trigger: 'webhook-trigger',
  receivedAt: 'webhook-received-at',
  traceparent: 'traceparent',
  /** Present ("base64") when the body holds characters SQS refuses, so it travels as its UTF-8 bytes in base64. */
  encoding: 'webhook-body-encoding',
  /** Present ("base64") when the key holds characters SQS refuses (U+FFFE, a control character): the same way. */
  keyEncoding: 'webhook-key-encoding',
} as const;

/** SQS's default size limit for one message: its body and its attributes' names, types and values. */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024;

/** A MessageGroupId or MessageDeduplicationId: ASCII letters, digits and punctuation, 1 to 128 of them. */
const SQS_ID = /^[\x21-\x7e]{1,128}$/;
/** Characters SQS refuses in a body (it allows XML 1.0's: tab, newlines, U+0020-U+D7FF, U+E000-U+FFFD, astral). */
const REFUSED_BY_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** A message attribute as this module writes them: always both parts (SQS's type has them optional). */
type Attribute = { DataType: 'String' | 'Number'; StringValue: string };

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * FIFO's deduplication id: the key hashed (64 characters), so SQS drops the platform's retries of an event.
 *
 * @example
 * ```ts
 * import { deduplicationId } from 'chat-webhooks/aws';
 *
 * deduplicationId('2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421'); // 64 hex characters, the same for every retry
 * ```
 */
export function deduplicationId(key: string): string {
  return sha256Hex(key);
}

/**
 * The conversation an event belongs to, where it names one: its messages then keep their order on FIFO.
 *
 * @example
 * ```ts
 * import { parseWebhook } from 'chat-webhooks';
 * import { defaultGroupId, sqsQueue } from 'chat-webhooks/aws';
 *
 * defaultGroupId(parseWebhook(rawBody)); // a message_sent's conversation id
 * // One group per app instead:
 * const queue = sqsQueue({ queueUrl: process.env.QUEUE_URL!, groupId: (event) => String(event.appId) });
 * ```
 */
export function defaultGroupId(event: ParsedWebhook): string {
  const data = event.data as Record<string, { conversationId?: unknown } | undefined>;
  for (const holder of [data.message, data.group, data.call]) {
    if (holder && typeof holder.conversationId === 'string' && holder.conversationId !== '') {
      return holder.conversationId;
    }
  }
  return event.trigger;
}

/** A group id SQS accepts: as given when it can be, else hashed. */
export function validGroupId(id: string): string {
  return SQS_ID.test(id) ? id : sha256Hex(id);
}

const REFUSED_BY_SQS_ALL = new RegExp(REFUSED_BY_SQS.source, 'gu');
/**
 * A String attribute SQS takes: characters it refuses are written as \uXXXX escapes. Not reversible (a `\u`
 * already in the text reads the same), so only for what the consumer does not read back exactly: the trigger
 * (it reads the body's) and the traceparent (W3C's form is hex and dashes).
 */
const text = (value: string): Attribute => ({
  DataType: 'String',
  StringValue: value.replace(REFUSED_BY_SQS_ALL, (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`),
});

/**
 * The key's attributes: as it is, or where SQS refuses a character of it, its UTF-8 bytes in base64 with
 * `webhook-key-encoding`, which `fromRecord` reverses. Escaped like the other attributes, keys differing in such
 * characters met (`w\uFFFE` and `w\\ufffe`), and the consumer ran one of the two events (issue 33). The
 * receiver's keys hold no lone surrogate (src/events/idempotency.ts escapes them), so UTF-8 keeps them whole.
 */
function keyAttributes(key: string, attributes: Record<string, Attribute>): void {
  if (!REFUSED_BY_SQS.test(key)) {
    attributes[ATTRIBUTES.key] = { DataType: 'String', StringValue: key };
    return;
  }
  attributes[ATTRIBUTES.key] = { DataType: 'String', StringValue: Buffer.from(key).toString('base64') };
  attributes[ATTRIBUTES.keyEncoding] = { DataType: 'String', StringValue: 'base64' };
}

/** The message for an entry; `id` names it within its batch. Throws (413) when it is larger than SQS takes. */
export function toMessage(
  entry: InboxEntry,
  id: string,
  fifo: { groupId: (event: ParsedWebhook) => string } | undefined,
  maxBytes: number,
): { message: SendMessageBatchRequestEntry; bytes: number } {
  const attributes: Record<string, Attribute> = {};
  keyAttributes(entry.key, attributes);
  attributes[ATTRIBUTES.receivedAt] = { DataType: 'Number', StringValue: String(entry.receivedAt) };
  // SQS refuses an empty attribute value; the consumer reads the trigger from the body anyway.
  if (entry.trigger !== '') attributes[ATTRIBUTES.trigger] = text(entry.trigger);
  if (entry.traceparent) attributes[ATTRIBUTES.traceparent] = text(entry.traceparent);
  let body = entry.rawBody;
  if (REFUSED_BY_SQS.test(body)) {
    body = Buffer.from(body).toString('base64');
    attributes[ATTRIBUTES.encoding] = text('base64');
  }
  const bytes = messageBytes(body, attributes);
  if (bytes > maxBytes) {
    throw new WebhookError(
      'payload_too_large',
      `The event is ${bytes} bytes as an SQS message, above the queue's limit of ${maxBytes} bytes; it was not queued. ` +
        "(The platform's own 10 KB limit on `data` makes this rare.)",
    );
  }
  const message: SendMessageBatchRequestEntry = { Id: id, MessageBody: body, MessageAttributes: attributes };
  if (fifo) {
    message.MessageDeduplicationId = deduplicationId(entry.key);
    message.MessageGroupId = validGroupId(fifo.groupId(entry.event));
  }
  return { message, bytes };
}

/** The size SQS counts: the body, and each attribute's name, data type and value, in UTF-8 bytes. */
function messageBytes(body: string, attributes: Record<string, Attribute>): number {
  let bytes = Buffer.byteLength(body);
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType) + Buffer.byteLength(value.StringValue);
  }
  return bytes;
}

/** What a record carries back: the raw body, and what the receiver knew of it. */
export interface ReceivedMessage {
  rawBody: string;
  /** Absent when the message did not come from `sqsQueue` (an `enqueue` of your own, say). */
  key: string | undefined;
  receivedAt: number;
  attempt: number;
  traceparent: string | undefined;
}

export function fromRecord(record: SqsRecord): ReceivedMessage {
  const attributes = record.messageAttributes ?? {};
  const value = (name: string) => attributes[name]?.stringValue;
  const rawBody = value(ATTRIBUTES.encoding) === 'base64' ? Buffer.from(record.body, 'base64').toString('utf8') : record.body;
  const key = value(ATTRIBUTES.key);
  const receivedAt = Number(value(ATTRIBUTES.receivedAt) ?? record.attributes?.SentTimestamp);
  const attempt = Number(record.attributes?.ApproximateReceiveCount);
  return {
    rawBody,
    key: (key && value(ATTRIBUTES.keyEncoding) === 'base64' ? Buffer.from(key, 'base64').toString('utf8') : key) || undefined,
    receivedAt: Number.isFinite(receivedAt) ? receivedAt : Date.now(),
    attempt: Number.isSafeInteger(attempt) && attempt > 0 ? attempt : 1,
    traceparent: value(ATTRIBUTES.traceparent),
  };
}
