/** `data` at most 10 KB in UTF-8 bytes (attachment files excluded); at most 25 tags of at most 100 characters. */
import { describe, expect, it } from 'vitest';
import { MESSAGE_DATA_MAX_BYTES, messageDataSchema, messageDataSize, messageTagsSchema } from '../../src/api/index.js';

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
/** `{"text":"…"}` of exactly `size` bytes, the text padded with `unit` then ASCII. */
function dataOfSize(size: number, unit = 'a'): { text: string } {
  const room = size - bytes('{"text":""}');
  const units = Math.floor(room / bytes(unit));
  const text = unit.repeat(units) + 'a'.repeat(room - units * bytes(unit));
  return { text };
}

describe('messageDataSize', () => {
  it('counts compact JSON in UTF-8 bytes: ASCII 1, CJK 3, emoji 4, an escaped quote 2', () => {
    const empty = messageDataSize({ text: '' });
    expect(empty).toBe(11);
    expect(messageDataSize({ text: 'a' }) - empty).toBe(1);
    expect(messageDataSize({ text: '中' }) - empty).toBe(3);
    expect(messageDataSize({ text: '😀' }) - empty).toBe(4);
    expect(messageDataSize({ text: '"' }) - empty).toBe(2);
  });

  it('counts an attachment’s description but not its file', () => {
    const description = { url: 'https://cdn.example/f.png', name: 'f.png', size: 2_000_000, mimeType: 'image/png' };
    const withFile = { attachments: [{ ...description, file: 'x'.repeat(1_000_000) }] };
    expect(messageDataSize(withFile)).toBe(messageDataSize({ attachments: [description] }));
    expect(messageDataSize({ attachments: [description] })).toBe(bytes(JSON.stringify({ attachments: [description] })));
  });
});

describe('messageDataSize: what is not an attachment object', () => {
  it('counts attachments that are not plain objects as they are', () => {
    const odd = [null, 'x', ['file', 'y'], 7];
    expect(messageDataSize({ attachments: odd })).toBe(bytes(JSON.stringify({ attachments: odd })));
  });

  it('throws a TypeError when data has no JSON form at all', () => {
    expect(() => messageDataSize({ toJSON: () => undefined })).toThrow(new TypeError('message data is not serializable to JSON'));
  });
});

describe('messageDataSchema', () => {
  it('is 10 KB = 10 240 bytes', () => {
    expect(MESSAGE_DATA_MAX_BYTES).toBe(10_240);
  });

  it.each([
    ['ASCII', 'a'],
    ['CJK', '中'],
    ['emoji', '😀'],
  ])('accepts exactly 10 KB (%s) and refuses 10 KB plus one emoji', (_name, unit) => {
    const data = dataOfSize(10_240, unit);
    expect(messageDataSize(data)).toBe(10_240);
    expect(messageDataSchema.safeParse(data).success).toBe(true);
    const over = { text: `${data.text}😀` };
    expect(messageDataSize(over)).toBe(10_244);
    const result = messageDataSchema.safeParse(over);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/10244 bytes.*at most 10240/);
  });

  it('reports the size and the limit in the issue', () => {
    const result = messageDataSchema.safeParse(dataOfSize(10_241));
    expect(result.error?.issues).toEqual([
      {
        code: 'custom',
        path: [],
        params: { bytes: 10_241, maximum: 10_240 },
        message: 'data is 10241 bytes serialized; at most 10240 (10 KB, UTF-8, attachment files excluded)',
      },
    ]);
  });

  it('reports data without a JSON form as a custom issue', () => {
    expect(messageDataSchema.safeParse({ text: 'a', toJSON: () => undefined }).error?.issues).toEqual([
      { code: 'custom', path: [], message: 'data must be serializable to JSON (message data is not serializable to JSON)' },
    ]);
  });

  it('checks the types of an attachment’s described fields', () => {
    const paths = (attachment: unknown) => messageDataSchema.safeParse({ attachments: [attachment] }).error?.issues.map((issue) => issue.path.join('.'));
    expect(paths({ url: 'https://cdn.example/a', name: 'a', size: 0, extension: 'png', mimeType: 'image/png', file: 1 })).toBeUndefined();
    expect(paths({ url: 1, name: 2, size: -1, extension: 3, mimeType: 4 })).toEqual([
      'attachments.0.url',
      'attachments.0.name',
      'attachments.0.size',
      'attachments.0.extension',
      'attachments.0.mimeType',
    ]);
  });

  it('refuses one byte over', () => {
    expect(messageDataSchema.safeParse(dataOfSize(10_241)).success).toBe(false);
  });

  it('counts every property, not just text', () => {
    const data = { text: 'hi', custom_data: { blob: 'x'.repeat(10_240) } };
    expect(messageDataSchema.safeParse(data).success).toBe(false);
  });

  it('lets a large attachment file through while its description fits, and refuses a description that does not', () => {
    const file = new Uint8Array(5 * 1024 * 1024);
    const attachment = { url: 'https://cdn.example/a.bin', name: 'a.bin', size: file.byteLength, file };
    expect(messageDataSchema.safeParse({ attachments: [attachment] }).success).toBe(true);
    const underAnotherKey = { url: attachment.url, name: 'a.bin', bytes: file, blob: new Blob([file]) };
    expect(messageDataSize({ attachments: [underAnotherKey] })).toBe(messageDataSize({ attachments: [{ url: attachment.url, name: 'a.bin' }] }));
    const longUrl = { ...attachment, url: `https://cdn.example/${'p'.repeat(10_300)}` };
    expect(messageDataSchema.safeParse({ attachments: [longUrl] }).success).toBe(false);
  });

  it('keeps unknown properties and checks the named ones', () => {
    const data = { text: 'hi', metadata: { a: 1 }, poll: { options: ['x'] } };
    expect(messageDataSchema.parse(data)).toEqual(data);
    expect(messageDataSchema.safeParse({ text: 42 }).error?.issues[0]?.path).toEqual(['text']);
    expect(messageDataSchema.safeParse({ metadata: 'x' }).error?.issues[0]?.path).toEqual(['metadata']);
    expect(messageDataSchema.safeParse({ attachments: {} }).error?.issues[0]?.path).toEqual(['attachments']);
  });

  it('refuses what is not a JSON object', () => {
    for (const value of [null, 'text', 42, ['a'], undefined]) expect(messageDataSchema.safeParse(value).success).toBe(false);
    const cyclic: Record<string, unknown> = { text: 'a' };
    cyclic.self = cyclic;
    expect(messageDataSchema.safeParse(cyclic).error?.issues[0]?.message).toMatch(/serializable/);
    expect(messageDataSchema.safeParse({ n: 10n }).success).toBe(false);
  });
});

describe('messageTagsSchema', () => {
  it('accepts 25 tags and refuses 26', () => {
    const tags = Array.from({ length: 25 }, (_, i) => `tag-${i}`);
    expect(messageTagsSchema.safeParse(tags).success).toBe(true);
    const result = messageTagsSchema.safeParse([...tags, 'one-more']);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/at most 25 tags/);
  });

  it.each([
    ['ASCII', 'a'],
    ['emoji', '😀'],
    ['CJK', '漢'],
    ['Devanagari', 'क'],
  ])('accepts a tag of 100 characters and refuses 101 (%s)', (_name, character) => {
    expect(messageTagsSchema.safeParse([character.repeat(100)]).success).toBe(true);
    const result = messageTagsSchema.safeParse(['ok', character.repeat(101)]);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([1]);
  });

  it('says why a tag is refused', () => {
    expect(messageTagsSchema.safeParse(['a'.repeat(101), '\udc00x']).error?.issues.map((issue) => issue.message)).toEqual([
      'a tag has at most 100 characters',
      'a tag must be well-formed Unicode (no lone surrogate)',
    ]);
  });

  it('counts code points: 100 emoji are 200 UTF-16 units and still one tag’s worth', () => {
    expect('😀'.repeat(100).length).toBe(200);
    expect(messageTagsSchema.safeParse(['😀'.repeat(100)]).success).toBe(true);
  });

  it('refuses a lone surrogate (utf8mb4 cannot store it) and anything but strings', () => {
    expect(messageTagsSchema.safeParse(['\ud83d']).success).toBe(false);
    expect(messageTagsSchema.safeParse([42]).success).toBe(false);
    expect(messageTagsSchema.safeParse('tag').success).toBe(false);
    expect(messageTagsSchema.safeParse([]).success).toBe(true);
  });
});
