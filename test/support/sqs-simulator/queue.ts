/**
 * One simulated SQS queue: what SQS does with a message between SendMessage and DeleteMessage. Every rule
 * here is one the AWS documentation states; test/support/sqs-simulator/simulator.test.ts quotes each rule and
 * its page beside the test that pins it. Time is the simulator's clock, so a visibility timeout or FIFO's
 * 5-minute deduplication window passes in a test without waiting for it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { attributesMd5, messageBytes, SqsFault, type Attribute } from './wire.js';

export interface SentEntry {
  Id: string;
  MessageBody: string;
  MessageAttributes?: Record<string, Attribute>;
  MessageDeduplicationId?: string;
  MessageGroupId?: string;
}

export interface Message {
  messageId: string;
  body: string;
  attributes: Record<string, Attribute>;
  groupId?: string;
  deduplicationId?: string;
  sentAt: number;
  sequence: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** Until when the message is hidden after its last receive (0: never received). */
  invisibleUntil: number;
  /** The receipt handle of its latest receive: only that one deletes it or changes its visibility. */
  receipt?: string;
}

export interface QueueOptions {
  /** The queue's VisibilityTimeout attribute, in seconds (SQS's default is 30). */
  visibilityTimeoutSeconds?: number;
  /** The redrive policy: after this many receives the next receive moves the message to `deadLetter`. */
  maxReceiveCount?: number;
  deadLetter?: SimulatedQueue;
  /** The queue's MaximumMessageSize attribute, in bytes. */
  maximumMessageSize?: number;
}

const FIFO_DEDUPLICATION_MS = 5 * 60 * 1000;
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
const MAX_ATTRIBUTES = 10;
/** SQS takes only XML 1.0's characters, in bodies and attribute values alike. */
const REFUSED = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
export const DEFAULT_MAXIMUM_MESSAGE_SIZE = 262_144;

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

export class SimulatedQueue {
  /** The messages stored: visible, in flight, not yet deleted; in the order they were sent. */
  readonly messages: Message[] = [];
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
  readonly deadLetter: SimulatedQueue | undefined;
  readonly maximumMessageSize: number;
  readonly #deduplication = new Map<string, { messageId: string; at: number }>();
  #sequence = 0;

  constructor(
    readonly url: string,
    readonly clock: Clock,
    options: QueueOptions = {},
  ) {
    this.visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 30;
    this.maxReceiveCount = options.maxReceiveCount ?? 3;
    this.deadLetter = options.deadLetter;
    this.maximumMessageSize = options.maximumMessageSize ?? DEFAULT_MAXIMUM_MESSAGE_SIZE;
  }

  get name(): string {
    return this.url.split('/').pop() as string;
  }

  get fifo(): boolean {
    return this.url.endsWith('.fifo');
  }

  get arn(): string {
    return `arn:aws:sqs:us-east-1:123456789012:${this.name}`;
  }

  /** SendMessage(Batch)'s work for one entry: stored, or (FIFO) recognised as a repeat and dropped. */
  send(entry: SentEntry): { messageId: string; sequence?: string; md5OfAttributes?: string } {
    this.#check(entry);
    const now = this.clock.now();
    const attributes = entry.MessageAttributes ?? {};
    const md5OfAttributes = Object.keys(attributes).length > 0 ? attributesMd5(attributes) : undefined;
    if (this.fifo) {
      const seen = this.#deduplication.get(entry.MessageDeduplicationId as string);
      if (seen && now - seen.at < FIFO_DEDUPLICATION_MS) return { messageId: seen.messageId, ...(md5OfAttributes ? { md5OfAttributes } : {}) };
    }
    const message: Message = {
      messageId: randomUUID(),
      body: entry.MessageBody,
      attributes,
      sentAt: now,
      sequence: ++this.#sequence,
      receiveCount: 0,
      invisibleUntil: 0,
      ...(entry.MessageGroupId ? { groupId: entry.MessageGroupId } : {}),
      ...(entry.MessageDeduplicationId ? { deduplicationId: entry.MessageDeduplicationId } : {}),
    };
    if (this.fifo) this.#deduplication.set(entry.MessageDeduplicationId as string, { messageId: message.messageId, at: now });
    this.messages.push(message);
    return {
      messageId: message.messageId,
      ...(this.fifo ? { sequence: String(message.sequence).padStart(20, '0') } : {}),
      ...(md5OfAttributes ? { md5OfAttributes } : {}),
    };
  }

  #check(entry: SentEntry): void {
    const values = [entry.MessageBody, ...Object.values(entry.MessageAttributes ?? {}).map((value) => value.StringValue ?? '')];
    if (values.some((value) => REFUSED.test(value))) {
      throw new SqsFault('InvalidMessageContents', 'Invalid binary character was found in the message body or attributes.');
    }
    if (!entry.MessageBody) throw new SqsFault('MissingParameter', 'The request must contain the parameter MessageBody.');
    const attributes = Object.values(entry.MessageAttributes ?? {});
    if (attributes.some((value) => !value.DataType || (value.StringValue ?? value.BinaryValue ?? '') === '')) {
      throw new SqsFault('InvalidParameterValue', 'Message attribute value must not be empty.');
    }
    if (attributes.length > MAX_ATTRIBUTES) throw new SqsFault('InvalidParameterValue', `Number of message attributes [${attributes.length}] exceeds the allowed maximum [${MAX_ATTRIBUTES}].`);
    if (messageBytes(entry) > this.maximumMessageSize) {
      throw new SqsFault('InvalidParameterValue', `One or more parameters are invalid. Reason: Message must be shorter than ${this.maximumMessageSize} bytes.`);
    }
    if (!this.fifo) return;
    if (!entry.MessageGroupId) throw new SqsFault('MissingParameter', 'The request must contain the parameter MessageGroupId.');
    if (!entry.MessageDeduplicationId) {
      throw new SqsFault('InvalidParameterValue', 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly');
    }
  }

  #inFlight(message: Message, now: number): boolean {
    return message.invisibleUntil > now;
  }

  /**
   * ReceiveMessage: up to `max` visible messages, each hidden for the visibility timeout and given a new
   * receipt handle. A message received `maxReceiveCount` times already goes to the dead-letter queue instead.
   * FIFO: in order, and never a message of a group that has one in flight; as many of one group as can be.
   */
  receive(max: number, visibilityTimeoutSeconds = this.visibilityTimeoutSeconds): Message[] {
    const now = this.clock.now();
    const taken = this.fifo ? this.#fifoCandidates(now).slice(0, max) : this.#candidates(now, max);
    for (const message of taken) {
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.invisibleUntil = now + visibilityTimeoutSeconds * 1000;
      message.receipt = Buffer.from(`${this.arn}#${message.messageId}#${message.receiveCount}#${randomUUID()}`).toString('base64');
    }
    return taken;
  }

  /** Visible messages in order, up to `max` (all with no max), the ones past their maxReceiveCount redriven. */
  #candidates(now: number, max = Infinity, skip: (message: Message) => boolean = () => false): Message[] {
    const found: Message[] = [];
    for (const message of [...this.messages]) {
      if (found.length === max) break;
      if (this.#inFlight(message, now) || skip(message)) continue;
      if (this.deadLetter && message.receiveCount >= this.maxReceiveCount) {
        this.#remove(message);
        this.deadLetter.#adopt(message);
        continue;
      }
      found.push(message);
    }
    return found;
  }

  /** FIFO: no group with a message in flight; a group's messages together, groups in the order of their first. */
  #fifoCandidates(now: number): Message[] {
    const busy = new Set(this.messages.filter((m) => this.#inFlight(m, now)).map((m) => m.groupId));
    const groups = new Map<string | undefined, Message[]>();
    for (const message of this.#candidates(now, Infinity, (m) => busy.has(m.groupId))) {
      groups.set(message.groupId, [...(groups.get(message.groupId) ?? []), message]);
    }
    return [...groups.values()].flat();
  }

  /** A message the redrive policy moved here: the same id, body and attributes, visible at once. */
  #adopt(message: Message): void {
    const { receipt: _receipt, firstReceivedAt: _first, ...kept } = message;
    this.messages.push({ ...kept, sequence: ++this.#sequence, invisibleUntil: 0 });
  }

  #remove(message: Message): void {
    this.messages.splice(this.messages.indexOf(message), 1);
  }

  /** The stored message a receipt handle names; undefined for a handle of an older receive. */
  #byReceipt(receiptHandle: string): Message | undefined {
    const [arn, messageId] = Buffer.from(receiptHandle, 'base64').toString('utf8').split('#');
    if (arn !== this.arn || !messageId) throw new SqsFault('ReceiptHandleIsInvalid', `The input receipt handle "${receiptHandle}" is not a valid receipt handle.`);
    return this.messages.find((message) => message.receipt === receiptHandle);
  }

  /** DeleteMessage: the latest receipt deletes (in flight or not); an older one succeeds and deletes nothing. */
  delete(receiptHandle: string): void {
    const message = this.#byReceipt(receiptHandle);
    if (message) this.#remove(message);
  }

  /** ChangeMessageVisibility: counted from now; 0 makes the message visible at once. */
  changeVisibility(receiptHandle: string, seconds: number): void {
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_VISIBILITY_SECONDS) {
      throw new SqsFault('InvalidParameterValue', `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.`);
    }
    const message = this.#byReceipt(receiptHandle);
    const now = this.clock.now();
    if (!message || !this.#inFlight(message, now)) throw new SqsFault('MessageNotInflight', 'The message referred to is not in flight.');
    message.invisibleUntil = now + seconds * 1000;
  }

  /** The visibility timeout of every message in flight runs out: the clock moves on by the queue's timeout. */
  timeOut(): void {
    this.clock.advance(this.visibilityTimeoutSeconds * 1000 + 1);
  }

  /** GetQueueAttributes' approximate counts, exact here. */
  counts(): { visible: number; inFlight: number } {
    const now = this.clock.now();
    const inFlight = this.messages.filter((message) => this.#inFlight(message, now)).length;
    return { visible: this.messages.length - inFlight, inFlight };
  }

  /** The system attributes a receive returns (Lambda's records carry the same). */
  systemAttributes(message: Message): Record<string, string> {
    return {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'AROAEXAMPLE:chat-webhooks-receiver',
      ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
      ...(this.fifo
        ? { SequenceNumber: String(message.sequence).padStart(20, '0'), MessageGroupId: message.groupId as string, MessageDeduplicationId: message.deduplicationId as string }
        : {}),
    };
  }

  md5OfBody(message: Message): string {
    return md5(message.body);
  }
}
