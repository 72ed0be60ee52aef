/**
 * One event as one SQS message, at its edges: which characters SQS refuses (each end of every range it takes),
 * the size SQS counts to the byte, FIFO ids, and what a record carries back when parts of it are missing or
 * odd. toMessage's messages are sent to the SQS simulator (test/support/sqs-simulator/), which refuses what SQS
 * refuses, and read back from the records it builds.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultGroupId, fromRecord, toMessage, validGroupId } from '../../../adapters/aws/sqs-message.js';
import { idempotencyKey, type InboxEntry, type ParsedWebhook } from '../../../src/index.js';
import { createTestEvent } from '../../../src/testing/index.js';
import { lambdaEvent, sqsSimulatorPerSuite, type SimulatedQueue as Queue } from '../../support/sqs-simulator/index.js';

const sqs = sqsSimulatorPerSuite();

let names = 0;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const LIMIT = 256 * 1024;

function entryOf(overrides: Partial<InboxEntry> = {}): InboxEntry {
  const event = createTestEvent('message_sent');
  const rawBody = JSON.stringify(event);
  return { key: idempotencyKey(event, rawBody), trigger: event.trigger, event, rawBody, receivedAt: 1_700_000_000_000, ...overrides };
}

/** The entry through toMessage into a queue and back out as Lambda's record, read by fromRecord. */
function roundTrip(queue: Queue, entry: InboxEntry, fifo?: { groupId: (event: ParsedWebhook) => string }) {
  const { message } = toMessage(entry, 'm1', fifo, LIMIT);
  queue.send(message as never);
  const [record] = lambdaEvent(queue, queue.receive(1)).Records;
  return { message, record: record!, read: fromRecord(record!) };
}

describe('toMessage: what SQS takes goes as it is, anything else as base64', () => {
  // XML 1.0's characters: tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF; each end of each range.
  const taken = ['\t', '\n', '\r', ' ', '\uD7FF', '\uE000', '\uFFFD', '\u{10000}', '\u{10FFFF}'];
  const refused = ['\u0000', '\u0008', '\u000B', '\u000C', '\u000E', '\u001F', '\uD800', '\uDFFF', '\uFFFE', '\uFFFF'];

  it.each(taken.map((c) => [c.codePointAt(0)!.toString(16), c]))('U+%s in the body and the key: as it is', (_hex, c) => {
    const queue = sqs.queue(`message-${++names}`);
    const rawBody = `{"trigger":"message_sent","data":{"text":"a${c}b"}}`;
    const { message, read } = roundTrip(queue, entryOf({ rawBody, key: `k${c}k` }));
    expect(message.MessageBody).toBe(rawBody);
    expect(message.MessageAttributes?.['webhook-body-encoding']).toBeUndefined();
    expect(message.MessageAttributes?.['webhook-key']?.StringValue).toBe(`k${c}k`);
    expect(message.MessageAttributes?.['webhook-key-encoding']).toBeUndefined();
    expect([read.rawBody, read.key]).toEqual([rawBody, `k${c}k`]);
  });

  it.each(refused.map((c) => [c.codePointAt(0)!.toString(16), c]))('U+%s in the body and the key: base64, and back', (_hex, c) => {
    const queue = sqs.queue(`message-${++names}`);
    // A lone surrogate does not survive UTF-8: the receiver's keys and bodies never hold one (the body is text
    // decoded from bytes), so only the encoding is checked for those.
    const whole = !/[\uD800-\uDFFF]/.test(c);
    const rawBody = `{"trigger":"message_sent","data":{"text":"a${c}b"}}`;
    const { message, read } = roundTrip(queue, entryOf({ rawBody, key: `k${c}k` }));
    expect(message.MessageBody).toBe(Buffer.from(rawBody, 'utf8').toString('base64'));
    expect(message.MessageAttributes?.['webhook-body-encoding']).toEqual({ DataType: 'String', StringValue: 'base64' });
    expect(message.MessageAttributes?.['webhook-key']).toEqual({ DataType: 'String', StringValue: Buffer.from(`k${c}k`, 'utf8').toString('base64') });
    expect(message.MessageAttributes?.['webhook-key-encoding']).toEqual({ DataType: 'String', StringValue: 'base64' });
    if (whole) expect([read.rawBody, read.key]).toEqual([rawBody, `k${c}k`]);
  });

  it('a trigger or traceparent with characters SQS refuses is escaped as \\uXXXX, four hex digits at least', () => {
    const queue = sqs.queue(`message-${++names}`);
    const { message } = roundTrip(queue, entryOf({ trigger: 'a\u0001b\uFFFEc\u0000', traceparent: 'x\u001fy' }));
    expect(message.MessageAttributes?.['webhook-trigger']).toEqual({ DataType: 'String', StringValue: 'a\\u0001b\\ufffec\\u0000' });
    expect(message.MessageAttributes?.traceparent).toEqual({ DataType: 'String', StringValue: 'x\\u001fy' });
    // Every one of them, not the first only.
    const many = toMessage(entryOf({ trigger: '\u0001\u0002' }), 'm', undefined, LIMIT).message;
    expect(many.MessageAttributes?.['webhook-trigger']?.StringValue).toBe('\\u0001\\u0002');
  });

  it('an empty trigger is no attribute (SQS refuses an empty value); the consumer reads the body\'s', () => {
    const queue = sqs.queue(`message-${++names}`);
    const { message, read } = roundTrip(queue, entryOf({ trigger: '' }));
    expect(Object.keys(message.MessageAttributes ?? {}).sort()).toEqual(['webhook-key', 'webhook-received-at']);
    expect(read.receivedAt).toBe(1_700_000_000_000);
  });
});

describe('toMessage: the size SQS counts', () => {
  // The body and each attribute's name, data type and value, in UTF-8 bytes.
  const counted = (entry: InboxEntry) =>
    Buffer.byteLength(entry.rawBody) +
    Buffer.byteLength('webhook-key' + 'String' + entry.key) +
    Buffer.byteLength('webhook-received-at' + 'Number' + String(entry.receivedAt)) +
    Buffer.byteLength('webhook-trigger' + 'String' + entry.trigger) +
    (entry.traceparent ? Buffer.byteLength('traceparent' + 'String' + entry.traceparent) : 0);

  it('is the body and every attribute in UTF-8 bytes: exactly the limit is taken, one byte more refused (413)', () => {
    const entry = entryOf({ rawBody: '{"text":"é✓𝄞"}', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const bytes = counted(entry);
    expect(toMessage(entry, 'm', undefined, bytes).bytes).toBe(bytes);
    let refused: unknown;
    try {
      toMessage(entry, 'm', undefined, bytes - 1);
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      code: 'payload_too_large',
      message: `The event is ${bytes} bytes as an SQS message, above the queue's limit of ${bytes - 1} bytes; it was not queued. (The platform's own 10 KB limit on \`data\` makes this rare.)`,
    });
  });

  it('a body sent as base64 counts as base64, with its marking attribute', () => {
    const entry = entryOf({ rawBody: '{"text":"\uFFFF"}' });
    const body = Buffer.from(entry.rawBody, 'utf8').toString('base64');
    const bytes = counted({ ...entry, rawBody: body }) + Buffer.byteLength('webhook-body-encoding' + 'String' + 'base64');
    expect(toMessage(entry, 'm', undefined, LIMIT).bytes).toBe(bytes);
  });
});

describe('FIFO ids', () => {
  it('the message names its id, a standard queue\'s message has no FIFO ids', () => {
    const { message } = toMessage(entryOf(), 'm42', undefined, LIMIT);
    expect(message.Id).toBe('m42');
    expect('MessageGroupId' in message || 'MessageDeduplicationId' in message).toBe(false);
  });

  it('a group id SQS takes (printable ASCII, 1 to 128) is kept, any other is hashed', () => {
    const kept = ['!', '~', 'a'.repeat(128), 'app-1/conv_2'];
    const hashed = ['', ' ', 'a b', '\u007f', 'é', 'a'.repeat(129), 'x\ny'];
    for (const id of kept) expect(validGroupId(id), id).toBe(id);
    for (const id of hashed) expect(validGroupId(id), JSON.stringify(id)).toBe(sha256(id));
    const queue = sqs.queue(`message-${++names}.fifo`);
    const entry = entryOf();
    const { message, record } = roundTrip(queue, entry, { groupId: () => 'a b' });
    expect(message.MessageGroupId).toBe(sha256('a b'));
    expect(record.attributes.MessageDeduplicationId).toBe(sha256(entry.key));
  });

  it('the default group: the first of message, group, call with a conversation id that is a non-empty string, else the trigger', () => {
    const event = (data: object) => ({ ...createTestEvent('message_sent'), data }) as unknown as ParsedWebhook;
    expect(defaultGroupId(event({ message: { conversationId: 'm' }, group: { conversationId: 'g' } }))).toBe('m');
    expect(defaultGroupId(event({ message: { conversationId: '' }, group: { conversationId: 'g' } }))).toBe('g');
    expect(defaultGroupId(event({ message: { conversationId: 7 }, call: { conversationId: 'c' } }))).toBe('c');
    expect(defaultGroupId(event({ message: 'text', group: null, call: { conversationId: 'c' } }))).toBe('c');
    expect(defaultGroupId(event({ message: {}, group: {}, call: {} }))).toBe('message_sent');
    expect(defaultGroupId(event({}))).toBe('message_sent');
  });
});

describe('fromRecord: what a record carries back', () => {
  const base = () => {
    const queue = sqs.queue(`message-${++names}`);
    return roundTrip(queue, entryOf()).record;
  };

  it('without message attributes (a message of your own): no key, receipt time from SentTimestamp', () => {
    const record = { ...base(), messageAttributes: undefined as never };
    record.attributes = { ...record.attributes, SentTimestamp: '1690000000000' };
    expect(fromRecord(record)).toEqual({ rawBody: record.body, key: undefined, receivedAt: 1_690_000_000_000, attempt: 1, traceparent: undefined });
    // Nor attributes: read at the time of reading, the first receive.
    const before = Date.now();
    const bare = fromRecord({ ...record, attributes: undefined as never });
    expect([bare.attempt, bare.receivedAt >= before && bare.receivedAt <= Date.now()]).toEqual([1, true]);
  });

  it('an empty key is no key; a key marked base64 that is empty is none either', () => {
    const record = base();
    record.messageAttributes['webhook-key'] = { dataType: 'String', stringValue: '' };
    expect(fromRecord(record).key).toBeUndefined();
    record.messageAttributes['webhook-key-encoding'] = { dataType: 'String', stringValue: 'base64' };
    expect(fromRecord(record).key).toBeUndefined();
    // Marked otherwise than base64: read as it is.
    record.messageAttributes['webhook-key'] = { dataType: 'String', stringValue: 'a2V5' };
    record.messageAttributes['webhook-key-encoding'] = { dataType: 'String', stringValue: 'hex' };
    expect(fromRecord(record).key).toBe('a2V5');
  });

  it('a body marked otherwise than base64 is read as it is', () => {
    const record = base();
    record.messageAttributes['webhook-body-encoding'] = { dataType: 'String', stringValue: 'gzip' };
    expect(fromRecord(record).rawBody).toBe(record.body);
  });

  it('a receipt time that is no number is the time of reading', () => {
    const record = base();
    record.messageAttributes['webhook-received-at'] = { dataType: 'Number', stringValue: 'soon' };
    const before = Date.now();
    const { receivedAt } = fromRecord(record);
    expect(receivedAt).toBeGreaterThanOrEqual(before);
    expect(receivedAt).toBeLessThanOrEqual(Date.now());
    record.messageAttributes['webhook-received-at'] = { dataType: 'Number', stringValue: '1700000000123' };
    expect(fromRecord(record).receivedAt).toBe(1_700_000_000_123);
  });

  it('attempt: ApproximateReceiveCount when it is a whole number from 1, else 1', () => {
    const record = base();
    const attemptOf = (count: string | undefined) => fromRecord({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: count as string } }).attempt;
    expect([attemptOf('1'), attemptOf('2'), attemptOf('9007199254740991')]).toEqual([1, 2, 9007199254740991]);
    expect([attemptOf('0'), attemptOf('-3'), attemptOf('1.5'), attemptOf('x'), attemptOf(undefined), attemptOf('9007199254740993')]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(fromRecord({ ...record, attributes: undefined as never }).attempt).toBe(1);
  });

  it('the traceparent attribute comes back as it was sent', () => {
    const queue = sqs.queue(`message-${++names}`);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(roundTrip(queue, entryOf({ traceparent })).read.traceparent).toBe(traceparent);
  });
});
