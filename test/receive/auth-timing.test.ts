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

const { AppBinding, createBasicAuthVerifier, createCredentialCheck, sameText } = await import('../../src/receive/auth/auth.js');
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

describe('the same path with credentials bound to apps (auth[].appId)', () => {
  const bound = [
    { username: 'acme', password: 'correct horse battery staple', appId: 'app-acme' },
    { username: 'globex', password: 'next secret', appId: ['app-globex', 'app-globex-eu'] },
    { username: 'platform', password: 'third' },
  ];
  function primedCheck() {
    const check = createCredentialCheck(bound);
    check(header('acme', 'correct horse battery staple'));
    comparisons.length = 0;
    return check;
  }

  it.each([
    ['wrong first byte', 'acme', 'Xorrect horse battery staple'],
    ['wrong last byte', 'acme', 'correct horse battery staplX'],
    ['another credential\'s user', 'globex', 'correct horse battery staple'],
    ['empty', '', ''],
  ])('%s: compares every credential, user and password, as 32-byte digests, and admits nothing', (_name, user, pass) => {
    expect(primedCheck()(header(user, pass))).toBe(false);
    expect(comparisons).toHaveLength(bound.length * 2);
    for (const [a, b] of comparisons) expect([a, b]).toEqual([32, 32]);
  });

  it('a right guess runs the same comparisons, and answers with its apps', () => {
    const check = primedCheck();
    const admitted = check(header('globex', 'next secret'));
    expect(comparisons).toHaveLength(bound.length * 2);
    expect(admitted).toBeInstanceOf(AppBinding);
    const apps = admitted as InstanceType<typeof AppBinding>;
    expect([apps.allows({ appId: 'app-globex-eu' }), apps.allows({ appId: 'app-acme' }), apps.allows({})]).toEqual([true, false, false]);
    expect(check(header('platform', 'third'))).toBe(true);
  });

  it('a remembered right header needs no digest comparison and keeps its apps', () => {
    const check = primedCheck();
    const admitted = check(header('acme', 'correct horse battery staple'));
    expect(comparisons).toEqual([]);
    expect((admitted as InstanceType<typeof AppBinding>).allows({ appId: 'app-acme' })).toBe(true);
    expect((admitted as InstanceType<typeof AppBinding>).allows({ appId: 'app-globex' })).toBe(false);
  });

  it('without any appId, the check answers plain true or false: nothing more on the default path', () => {
    const check = createCredentialCheck(rotationWithoutApps);
    expect(check(header('platform', 'correct horse battery staple'))).toBe(true);
    expect(check(header('platform', 'correct horse battery staple'))).toBe(true);
    expect(check(header('platform', 'wrong'))).toBe(false);
  });
});

const rotationWithoutApps = [
  { username: 'platform', password: 'correct horse battery staple' },
  { username: 'platform', password: 'next secret' },
];

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

describe('remembered accepted headers stay few and short', () => {
  const credentials = { username: 'platform', password: 'correct horse battery staple' };
  const canonical = header(credentials.username, credentials.password);
  const encoded = canonical.slice('Basic '.length);
  /** Accepted spellings of the same credentials, each up to ~7 KiB. */
  const variants = [
    ...[1000, 2000, 3000, 4000, 5000, 6000, 7000].map((spaces) => `Basic${' '.repeat(spaces)}${encoded}`),
    `bAsIc ${encoded}`,
    `Basic ${encoded}   `,
  ];

  it('a sender spacing or spelling the header differently is still accepted', () => {
    const verify = createBasicAuthVerifier(credentials);
    for (const variant of variants) expect(verify(variant)).toBe(true);
  });

  it('only the canonical form is remembered: after many long variants a wrong guess reads few characters', () => {
    const verify = createBasicAuthVerifier(credentials);
    expect(verify(canonical)).toBe(true);
    for (let round = 0; round < 3; round++) for (const variant of variants) verify(variant);
    const reads = vi.spyOn(String.prototype, 'charCodeAt');
    try {
      expect(verify(header('platform', 'wrong'))).toBe(false);
      // One remembered value of canonical length: one character of the guess read per remembered character.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(canonical.length);
    } finally {
      reads.mockRestore();
    }
    comparisons.length = 0;
    expect(verify(canonical)).toBe(true);
    expect(comparisons).toEqual([]);
  });

  it('a variant is verified afresh each time (full digest comparison), never taken from memory', () => {
    const verify = createBasicAuthVerifier(credentials);
    const variant = variants[3] as string;
    verify(variant);
    comparisons.length = 0;
    expect(verify(variant)).toBe(true);
    expect(comparisons).toHaveLength(2);
  });

  it('a right header spelled longer than the credential encodes to is verified afresh each time', () => {
    // A trailing sixth base64 character carries no whole byte: decoders drop it, so the header is right, and
    // canonical in form, but longer than any credential's encoding (the bound on what is remembered).
    // `app:pw` is six bytes: eight characters, no padding.
    const verify = createBasicAuthVerifier({ username: 'app', password: 'pw' });
    const longer = 'Basic YXBwOnB3A';
    expect(longer.length).toBe(header('app', 'pw').length + 1);
    expect(verify(longer)).toBe(true);
    comparisons.length = 0;
    expect(verify(longer)).toBe(true);
    expect(comparisons).toHaveLength(2);
  });

  it('wrong headers take no place among the remembered ones: the right one is still remembered after many', () => {
    const verify = createBasicAuthVerifier(credentials);
    // Canonical, as long as the right one, and wrong: eight would fill the memory if they were kept.
    for (let i = 0; i < 12; i++) expect(verify(header(credentials.username, `${credentials.password.slice(0, -2)}${String(i).padStart(2, '0')}`))).toBe(false);
    expect(verify(canonical)).toBe(true);
    comparisons.length = 0;
    expect(verify(canonical)).toBe(true);
    expect(comparisons).toEqual([]);
  });

  it('refuses a header longer than 8 KiB even when its credentials are right', () => {
    const verify = createBasicAuthVerifier(credentials);
    expect(verify(`Basic${' '.repeat(8 * 1024)}${encoded}`)).toBe(false);
    expect(verify(`Basic${' '.repeat(8 * 1024 - 6 - encoded.length)}${encoded}`)).toBe(true);
  });

  it('accepts a header of exactly 8 KiB and refuses one a character longer', () => {
    // The limit is inclusive; `>=` in place of `>` would refuse the 8192-character header.
    const verify = createBasicAuthVerifier(credentials);
    const padded = (length: number) => `Basic${' '.repeat(length - 5 - encoded.length)}${encoded}`;
    expect(padded(8 * 1024)).toHaveLength(8 * 1024);
    expect(verify(padded(8 * 1024))).toBe(true);
    expect(verify(padded(8 * 1024 + 1))).toBe(false);
  });
});
