/**
 * What an app may put in a message (spec 2.1 and 8): `data` of at most 10 KB serialized, and at most 25 tags
 * of at most 100 characters each.
 *
 * Sizes are counted the way the limit is stated: `data` as compact JSON in UTF-8 bytes (utf8mb4, so an emoji
 * is 4 bytes), tags in characters (Unicode code points, so an emoji or a CJK ideograph is one). An
 * attachment's descriptive properties (URL, name, size, …) count toward the 10 KB; the file itself, when an
 * attachment carries it (as `file`, or as bytes or a Blob under any key), does not: its size is limited
 * separately.
 */
import { z } from 'zod';

/** The 10 KB limit on `data`, in bytes. */
export const MESSAGE_DATA_MAX_BYTES = 10 * 1024;
export const MESSAGE_TAGS_MAX = 25;
export const MESSAGE_TAG_MAX_CHARACTERS = 100;

const encoder = new TextEncoder();

/** An attachment's description; `file` (the content itself) is excluded from the size. */
export const attachmentSchema = z.looseObject({
  url: z.string().optional(),
  name: z.string().optional(),
  size: z.number().nonnegative().optional(),
  extension: z.string().optional(),
  mimeType: z.string().optional(),
  file: z.unknown().optional(),
});

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The bytes `data` counts toward the 10 KB limit: its compact JSON in UTF-8, attachment files left out.
 * Throws a TypeError when `data` cannot be serialized (a cycle, a BigInt).
 *
 * @example
 * ```ts
 * import { messageDataSize } from 'chat-webhooks/api';
 *
 * messageDataSize({ text: 'héllo' }); // 17: {"text":"héllo"} in UTF-8, against the 10 240-byte limit
 * ```
 */
export function messageDataSize(data: Record<string, unknown>): number {
  const counted = Array.isArray(data.attachments)
    ? { ...data, attachments: data.attachments.map((item) => (isPlainObject(item) ? withoutFile(item) : item)) }
    : data;
  const json = JSON.stringify(counted);
  if (json === undefined) throw new TypeError('message data is not serializable to JSON');
  return encoder.encode(json).byteLength;
}

/** Binary content (bytes, a Blob or File) can only be the file itself, whatever the key holding it. */
const isBinary = (value: unknown): boolean => value instanceof ArrayBuffer || ArrayBuffer.isView(value) || value instanceof Blob;

function withoutFile(attachment: Record<string, unknown>): Record<string, unknown> {
  const description: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attachment)) if (key !== 'file' && !isBinary(value)) description[key] = value;
  return description;
}

/** `data` of a message: any JSON object; `text`, `attachments`, `custom_data`, `metadata` typed when present. */
export const messageDataSchema = z
  .looseObject({
    text: z.string().optional(),
    attachments: z.array(attachmentSchema).optional(),
    custom_data: z.unknown().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((data, context) => {
    let size: number;
    try {
      size = messageDataSize(data);
    } catch (error) {
      context.addIssue({ code: 'custom', message: `data must be serializable to JSON (${(error as Error).message})` });
      return;
    }
    if (size > MESSAGE_DATA_MAX_BYTES) {
      context.addIssue({
        code: 'custom',
        params: { bytes: size, maximum: MESSAGE_DATA_MAX_BYTES },
        message: `data is ${size} bytes serialized; at most ${MESSAGE_DATA_MAX_BYTES} (10 KB, UTF-8, attachment files excluded)`,
      });
    }
  });
export type MessageData = z.infer<typeof messageDataSchema>;

const characters = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

/** One tag: at most 100 characters (code points), any language; well-formed Unicode, as utf8mb4 stores. */
export const messageTagSchema = z
  .string()
  .refine((tag) => characters(tag) <= MESSAGE_TAG_MAX_CHARACTERS, {
    message: `a tag has at most ${MESSAGE_TAG_MAX_CHARACTERS} characters`,
  })
  .refine((tag) => !/\p{Cs}/u.test(tag), { message: 'a tag must be well-formed Unicode (no lone surrogate)' });

/** A message's tags: at most 25. */
export const messageTagsSchema = z.array(messageTagSchema).max(MESSAGE_TAGS_MAX, `at most ${MESSAGE_TAGS_MAX} tags per message`);
export type MessageTags = z.infer<typeof messageTagsSchema>;
