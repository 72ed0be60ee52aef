/**
 * The own Basic header parser accepts and reads exactly what the `basic-auth` package did (it is kept as a
 * dev dependency for this comparison only: at run time it pulled in safe-buffer and Node's Buffer).
 */
import basicAuth from 'basic-auth';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBasicCredentials } from '../../src/receive/auth/basic-credentials.js';

const reference = (header: string) => {
  const parsed = basicAuth.parse(header);
  return parsed ? { name: parsed.name, pass: parsed.pass } : undefined;
};
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('parseBasicCredentials', () => {
  it('reads user and password: scheme in any case, UTF-8, split at the first colon', () => {
    expect(parseBasicCredentials(`Basic ${encode('platform:pä:ss wörd')}`)).toEqual({ name: 'platform', pass: 'pä:ss wörd' });
    expect(parseBasicCredentials(`bAsIc ${encode('a:b')}`)).toEqual({ name: 'a', pass: 'b' });
    expect(parseBasicCredentials(`Basic ${encode(':')}`)).toEqual({ name: '', pass: '' });
    expect(parseBasicCredentials(`Basic ${encode('no colon')}`)).toBeUndefined();
    expect(parseBasicCredentials(`Bearer ${encode('a:b')}`)).toBeUndefined();
    expect(parseBasicCredentials('Basic')).toBeUndefined();
  });

  it('agrees with basic-auth on encoded credentials of any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.constantFrom('Basic ', 'basic  ', ' BASIC '), (user, pass, scheme) => {
        const header = `${scheme}${encode(`${user}:${pass}`)}`;
        expect(parseBasicCredentials(header)).toEqual(reference(header));
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with basic-auth on malformed headers: other alphabets, stray characters, padding, bytes that are not UTF-8', () => {
    const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_.~= :\t'.split(''));
    fc.assert(
      fc.property(fc.constantFrom('Basic ', 'basic ', 'Basic', 'Basic  '), fc.string({ unit: alphabet, maxLength: 40 }), (scheme, rest) => {
        const header = scheme + rest;
        expect(parseBasicCredentials(header)).toEqual(reference(header));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        const header = `Basic ${Buffer.from(bytes).toString('base64')}`;
        expect(parseBasicCredentials(header)).toEqual(reference(header));
      }),
      { numRuns: 500 },
    );
  });
});
