/**
 * The secret the credential digests are keyed with (src/receive/auth/auth.ts): 32 random bytes, drawn once, on the
 * first check rather than when the module loads (Cloudflare Workers refuse random values in global scope),
 * and written out whole as 64 hex digits before every value digested, so no digest can be precomputed.
 * `#platform` is wrapped to choose the bytes and see what is digested.
 */
import { describe, expect, it, vi } from 'vitest';

const drawn: number[] = [];
const digested: string[] = [];
vi.mock('#platform', async (original) => {
  const platform = await original<typeof import('#platform')>();
  return {
    ...platform,
    randomBytes: (length: number) => {
      drawn.push(length);
      // Bytes below 16 included: each must still give two hex digits.
      return Uint8Array.from({ length }, (_, i) => (i * 37 + 5) % 256);
    },
    sha256: (data: string | Uint8Array) => {
      if (typeof data === 'string') digested.push(data);
      return platform.sha256(data);
    },
  };
});

const { createBasicAuthVerifier } = await import('../../src/receive/auth/auth.js');
const header = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('the digests key', () => {
  it('is 32 random bytes drawn on the first check, in full hex before each digested value, and the same ever after', () => {
    expect(drawn).toEqual([]);
    const verify = createBasicAuthVerifier({ username: 'app', password: 's3cret' });
    expect(drawn).toEqual([32]);
    const key = Array.from({ length: 32 }, (_, i) => ((i * 37 + 5) % 256).toString(16).padStart(2, '0')).join('');
    expect(key).toHaveLength(64);
    expect(digested).toEqual([`${key}app`, `${key}s3cret`]);
    digested.length = 0;
    expect(verify(header('app:wrong'))).toBe(false);
    expect(createBasicAuthVerifier({ username: 'other', password: 'pw' })(header('other:pw'))).toBe(true);
    expect(drawn).toEqual([32]);
    expect(digested.every((value) => value.startsWith(key))).toBe(true);
    expect(digested.slice(0, 2)).toEqual([`${key}app`, `${key}wrong`]);
  });
});
