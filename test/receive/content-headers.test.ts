import { describe, expect, it } from 'vitest';
import { isIdentityEncoding, isJsonContentType, lowerCaseEquals, readHeader } from '../../src/receive/http.js';

describe('isJsonContentType: JSON in UTF-8', () => {
  it.each([
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=utf8',
    'application/vnd.api+json; charset=utf-8',
    'application/json; foo=bar',
    ' application/json ; charset = utf-8 ',
  ])('takes %j', (contentType) => expect(isJsonContentType(contentType)).toBe(true));

  it.each([
    'text/plain',
    'application/jsonx',
    'application/json; charset=utf-16',
    'application/json; charset=utf-16le',
    'application/json; charset=iso-8859-1',
    'application/json; charset=',
    // Quotes only around the whole value: these are not "utf-8" once unquoted.
    'application/json; charset=utf"-8"',
    'application/json; charset="utf"-8',
    'multipart/form-data; boundary=x',
  ])('refuses %j', (contentType) => expect(isJsonContentType(contentType)).toBe(false));

  it('answers the same whatever it accepted before (it remembers the last accepted spelling)', () => {
    for (const accepted of ['Application/json', 'application/json; charset=utf-8', `application/json;${' '.repeat(100)}charset=utf-8`]) {
      expect(isJsonContentType(accepted)).toBe(true);
      expect(isJsonContentType(accepted)).toBe(true);
      for (const refused of ['text/plain', 'Application/jsonx', 'application/json; charset=utf-16', '']) {
        expect(isJsonContentType(refused)).toBe(false);
      }
    }
  });
});

describe('isIdentityEncoding', () => {
  it.each(['', '  ', 'identity', ' Identity '])('takes %j', (value) => expect(isIdentityEncoding(value)).toBe(true));
  it.each(['gzip', 'br', 'deflate', 'identity, gzip', 'utf-8'])('refuses %j', (value) => expect(isIdentityEncoding(value)).toBe(false));
});

describe('lowerCaseEquals: toLowerCase() === lower, for text as long as lower', () => {
  it.each([
    ['Application/JSON', 'application/json'],
    ['AZaz09-/', 'azaz09-/'],
    ['', ''],
    // Not ASCII: folded as toLowerCase folds it (the Kelvin sign is a K).
    ['\u212A', 'k'],
    ['ÉTÉ', 'été'],
  ])('%j is %j', (text, lower) => expect(lowerCaseEquals(text, lower)).toBe(true));

  it.each([
    // The neighbours of A and Z are not letters: @ is not `, [ is not {.
    ['@', '`'],
    ['[', '{'],
    ['application/jsoN', 'application/jsom'],
    ['a', 'A'],
    ['ab', 'abc'],
    ['abc', 'ab'],
    ['É', 'e'],
    // İ lower-cases to two characters: never as long as its lower case.
    ['İ', 'i̇'],
  ])('%j is not %j', (text, lower) => expect(lowerCaseEquals(text, lower)).toBe(false));
});

describe('readHeader', () => {
  it('reads a record by the lower-case name, else by any spelling, and joins repeated values', () => {
    expect(readHeader({ 'content-type': 'a' }, 'content-type')).toBe('a');
    expect(readHeader({ 'Content-Type': 'a' }, 'content-type')).toBe('a');
    // The lower-case spelling wins over an earlier other one; a name only as long is not taken for it.
    expect(readHeader({ 'Content-Type': 'other', 'content-type': 'lower' }, 'content-type')).toBe('lower');
    expect(readHeader({ 'content-typf': 'x', 'Content-Type': 'a' }, 'content-type')).toBe('a');
    expect(readHeader({ authorization: ['one', 'two'] }, 'authorization')).toBe('one, two');
    expect(readHeader({ host: null } as never, 'host')).toBeUndefined();
    // An absent value under one spelling does not hide the header under another.
    expect(readHeader({ authorization: undefined, Authorization: 'Basic x' }, 'authorization')).toBe('Basic x');
    expect(readHeader({ Authorization: null, authorization: 'Basic y' } as never, 'authorization')).toBe('Basic y');
    expect(readHeader({ Host: null, HOST: 'h' } as never, 'host')).toBe('h');
    expect(readHeader({}, 'host')).toBeUndefined();
  });

  it('reads anything with get() through it, an absent header (null) as undefined', () => {
    const headers = new Headers({ 'Content-Type': 'application/json' });
    expect(readHeader(headers, 'content-type')).toBe('application/json');
    expect(readHeader(headers, 'authorization')).toBeUndefined();
    expect(readHeader({ get: () => '' }, 'x')).toBe('');
  });
});
