import { describe, expect, it } from 'vitest';
import { isIdentityEncoding, isJsonContentType } from '../../src/receive/http.js';

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
    'multipart/form-data; boundary=x',
  ])('refuses %j', (contentType) => expect(isJsonContentType(contentType)).toBe(false));
});

describe('isIdentityEncoding', () => {
  it.each(['', 'identity', ' Identity '])('takes %j', (value) => expect(isIdentityEncoding(value)).toBe(true));
  it.each(['gzip', 'br', 'deflate', 'identity, gzip', 'utf-8'])('refuses %j', (value) => expect(isIdentityEncoding(value)).toBe(false));
});
