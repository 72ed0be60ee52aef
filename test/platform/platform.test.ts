/**
 * The two sides of the runtime seam (#platform) keep one contract: same exports, same types, same answers.
 * web.ts runs here on Node's web APIs (TextEncoder, TextDecoder, crypto.getRandomValues/randomUUID, btoa).
 */
import { createHash, randomBytes as nodeRandomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as node from '../../src/platform/node.js';
import { sha1, sha256 } from '../../src/platform/sha.js';
import * as web from '../../src/platform/web.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('sha.ts', () => {
  it('agrees with node:crypto at every padding boundary', () => {
    for (const length of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_000]) {
      const message = nodeRandomBytes(length);
      expect(hex(sha256(message)), `sha256 of ${length} bytes`).toBe(createHash('sha256').update(message).digest('hex'));
      expect(hex(sha1(message)), `sha1 of ${length} bytes`).toBe(createHash('sha1').update(message).digest('hex'));
    }
  });

  it('gives the FIPS 180 test vectors', () => {
    const abc = new TextEncoder().encode('abc');
    expect(hex(sha256(abc))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha1(abc))).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
  });
});

describe('node.ts and web.ts', () => {
  it('export the same functions with the same types', () => {
    expect(Object.keys(web).sort()).toEqual(Object.keys(node).sort());
    expectTypeOf(web).toEqualTypeOf(node);
  });

  it('digest text and bytes alike', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(hex(web.sha256(text))).toBe(hex(node.sha256(text)));
        expect(web.sha1Base64(text)).toBe(node.sha1Base64(text));
        expect(web.sha256Base64(text)).toBe(node.sha256Base64(text));
        const bytes = node.utf8Bytes(text);
        expect(web.sha1Base64(bytes)).toBe(node.sha1Base64(bytes));
        expect(hex(web.utf8Bytes(text))).toBe(hex(bytes));
        expect(web.utf8Length(text)).toBe(node.utf8Length(text));
      }),
      { numRuns: 40 },
    );
  });

  it('count lone surrogates as the three bytes encoding makes of them', () => {
    for (const text of ['\ud800', '\udc00', 'a\ud83d', '\ud83d\ude00', '\ud83d\ud83d\ude00', 'é€😀']) {
      expect(web.utf8Length(text), JSON.stringify(text)).toBe(node.utf8Length(text));
    }
  });

  it('decode UTF-8 alike, invalid sequences as U+FFFD, a byte order mark kept', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(web.decodeUtf8(bytes)).toBe(node.decodeUtf8(bytes));
      }),
    );
    for (const bytes of [[0xef, 0xbb, 0xbf, 0x7b], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98], []]) {
      expect(web.decodeUtf8(new Uint8Array(bytes)), String(bytes)).toBe(node.decodeUtf8(new Uint8Array(bytes)));
    }
    expect(web.decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf]))).toBe('\ufeff');
    expect(web.decodeUtf8(new Uint8Array([0x61, 0xc3, 0x28]))).toBe('a\ufffd(');
  });

  it('compare bytes alike', () => {
    const a = new Uint8Array([1, 2, 3]);
    for (const side of [web, node]) {
      expect(side.timingSafeEqual(a, new Uint8Array([1, 2, 3]))).toBe(true);
      expect(side.timingSafeEqual(a, new Uint8Array([1, 2, 4]))).toBe(false);
      expect(() => side.timingSafeEqual(a, new Uint8Array(2))).toThrow();
    }
  });

  it('draw random values of the promised shapes', () => {
    for (const side of [web, node]) {
      expect(side.randomBytes(32)).toHaveLength(32);
      expect(hex(side.randomBytes(16))).not.toBe(hex(side.randomBytes(16)));
      const seed = side.randomInt32();
      expect(Number.isInteger(seed) && seed >= -(2 ** 31) && seed < 2 ** 31).toBe(true);
      expect(side.randomId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
