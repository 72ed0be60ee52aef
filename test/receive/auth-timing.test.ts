/**
 * The code path of the credential check is the same whatever the guess: same number of comparisons, each of
 * two 32-byte digests, whether the first wrong byte is at the start or the end, and whatever the guess's
 * length. (Wall-clock timing is not asserted: it is noise on a shared machine; the path is what makes it
 * constant.)
 */
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

const comparisons: Array<[number, number]> = [];
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof crypto>();
  return {
    ...original,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      comparisons.push([a.byteLength, b.byteLength]);
      return original.timingSafeEqual(a, b);
    },
  };
});

const { createBasicAuthVerifier, sameText } = await import('../../src/receive/auth.js');
const header = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('constant-time credential check', () => {
  const rotation = [
    { username: 'platform', password: 'correct horse battery staple' },
    { username: 'platform', password: 'next secret' },
    { username: 'other', password: 'third' },
  ];
  /** A verifier that has already accepted the right header once, as a running receiver has. */
  function primedVerifier() {
    const verify = createBasicAuthVerifier(rotation);
    verify(header(...guesses.right));
    comparisons.length = 0;
    return verify;
  }

  const guesses = {
    right: ['platform', 'correct horse battery staple'],
    'second credential': ['platform', 'next secret'],
    'wrong first byte': ['platform', 'Xorrect horse battery staple'],
    'wrong last byte': ['platform', 'correct horse battery staplX'],
    'one byte short': ['platform', 'correct horse battery stapl'],
    'much longer': ['platform', 'correct horse battery staple'.repeat(50)],
    empty: ['', ''],
    'wrong user': ['platforn', 'correct horse battery staple'],
  } as const;

  const wrong = Object.entries(guesses).filter(([name]) => name !== 'right');
  it.each(wrong)('%s: compares every credential, user and password, as 32-byte digests', (_name, [user, pass]) => {
    primedVerifier()(header(user, pass));
    expect(comparisons).toHaveLength(rotation.length * 2);
    for (const [a, b] of comparisons) expect([a, b]).toEqual([32, 32]);
  });

  it('a remembered right header needs no digest comparison', () => {
    expect(primedVerifier()(header(...guesses.right))).toBe(true);
    expect(comparisons).toEqual([]);
  });

  it('still gives the right answers', () => {
    const verify = primedVerifier();
    expect(verify(header(...guesses.right))).toBe(true);
    expect(verify(header(...guesses['second credential']))).toBe(true);
    expect(verify(header(...guesses['wrong last byte']))).toBe(false);
    expect(verify(header(...guesses['wrong user']))).toBe(false);
  });
});

describe('sameText, the comparison of remembered headers', () => {
  const secret = 'Basic cGxhdGZvcm06Y29ycmVjdCBob3JzZQ==';
  const guesses = {
    equal: secret,
    'first character differs': `X${secret.slice(1)}`,
    'last character differs': `${secret.slice(0, -1)}X`,
    'one shorter': secret.slice(0, -1),
    'much longer': secret.repeat(20),
    empty: '',
  };

  it.each(Object.entries(guesses))('%s: reads every character of the secret, and only those', (_name, guess) => {
    const reads = vi.spyOn(String.prototype, 'charCodeAt');
    try {
      expect(sameText(guess, secret)).toBe(guess === secret);
      expect(reads).toHaveBeenCalledTimes(secret.length * 2);
    } finally {
      reads.mockRestore();
    }
  });
});
