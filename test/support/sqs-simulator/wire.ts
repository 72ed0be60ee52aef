/**
 * What SQS's JSON protocol carries that the simulator must compute as SQS does: the size of a message (its
 * body and every attribute's name, type and value), the MD5 of its attributes (the SDKs check it), and the
 * faults it answers.
 */
import { createHash } from 'node:crypto';

export type Attribute = { DataType: string; StringValue?: string; BinaryValue?: string | Uint8Array };

/**
 * The codes SQS's query protocol gives with its AWS.SimpleQueueService. prefix; the SDK names an error by the
 * x-amzn-query-error header, so SQS's own names reach the caller (QueueDoesNotExist is NonExistentQueue there).
 */
const QUERY_CODES: Record<string, string> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
  ...Object.fromEntries(
    ['BatchEntryIdsNotDistinct', 'EmptyBatchRequest', 'TooManyEntriesInBatchRequest', 'BatchRequestTooLong', 'MessageNotInflight', 'UnsupportedOperation'].map((code) => [code, `AWS.SimpleQueueService.${code}`]),
  ),
};

export class SqsFault extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }

  get queryCode(): string {
    return QUERY_CODES[this.code] ?? this.code;
  }
}

const bytes = (value: string | Uint8Array | undefined): Buffer =>
  value === undefined ? Buffer.alloc(0) : typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);

/** A binary value as the JSON protocol sends it (base64), or as given in process. */
const binary = (value: string | Uint8Array | undefined): Buffer => (typeof value === 'string' ? Buffer.from(value, 'base64') : bytes(value));

/** The bytes SQS counts against MaximumMessageSize: the body, and each attribute's name, type and value. */
export function messageBytes(entry: { MessageBody: string; MessageAttributes?: Record<string, Attribute> }): number {
  let total = Buffer.byteLength(entry.MessageBody, 'utf8');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
    total += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType, 'utf8');
    total += value.StringValue !== undefined ? Buffer.byteLength(value.StringValue, 'utf8') : binary(value.BinaryValue).length;
  }
  return total;
}

/**
 * MD5OfMessageAttributes as SQS computes it: the attributes sorted by name, each as its name, its data type
 * (both 4-byte big-endian length, then UTF-8), a transport byte (1 string, 2 binary) and its value the same way.
 */
export function attributesMd5(attributes: Record<string, Attribute>): string {
  const parts: Buffer[] = [];
  const field = (value: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(value.length);
    parts.push(length, value);
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name] as Attribute;
    field(bytes(name));
    field(bytes(value.DataType));
    const isString = value.StringValue !== undefined;
    parts.push(Buffer.from([isString ? 1 : 2]));
    field(isString ? bytes(value.StringValue) : binary(value.BinaryValue));
  }
  return createHash('md5').update(Buffer.concat(parts)).digest('hex');
}
