/**
 * The checks that build the chat interface's base URL and vet a given one (src/api/base-url.ts), on their own:
 * what each accepts and how each refusal reads (it names the option, shows a value cut short, never a
 * credential). chat-client.test.ts and management-client.test.ts reach the same checks through the clients.
 */
import { describe, expect, it } from 'vitest';
import { chatBaseUrl, checkAppId, checkBaseUrl, checkSecret, normalizeRegion } from '../../src/api/base-url.js';
import { ValidationError } from '../../src/api/errors.js';

const WHAT = 'createTest';

/** The ValidationError `call` throws; fails the test when it throws nothing or something else. */
function refusal(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).message;
  }
  return expect.unreachable('should have thrown') as never;
}

describe('normalizeRegion', () => {
  it.each([
    ['us', 'us'],
    ['EU', 'eu'],
    [' In\t', 'in'],
  ])('takes %j as %j', (region, expected) => {
    expect(normalizeRegion(region, WHAT)).toBe(expected);
  });

  it.each([
    ['ap', '"ap"'],
    ['', '""'],
    [undefined, 'nothing'],
    [3, 'number'],
    [null, 'object'],
  ])('refuses %j, naming it as %s', (region, shown) => {
    expect(refusal(() => normalizeRegion(region, WHAT))).toBe(`createTest: region must be one of us, eu, in (any case); got ${shown}.`);
  });
});

describe('checkAppId', () => {
  it.each(['a', 'A1', 'app-42', 'x'.repeat(63), `a${'-'.repeat(61)}b`])('accepts %j as a host name label', (appId) => {
    expect(checkAppId(appId, WHAT)).toBe(appId);
  });

  it.each(['', '-a', 'a-', 'a_b', 'a.b', 'a b', 'é', 'x'.repeat(64), 42])('refuses %j', (appId) => {
    expect(refusal(() => checkAppId(appId, WHAT))).toMatch(/^createTest: appId must be the app id from the dashboard, usable as a host name label \(letters, digits and inner hyphens, at most 63\); got /);
  });

  it('shows at most 80 characters of what it got', () => {
    expect(refusal(() => checkAppId(`${'y'.repeat(80)}!`, WHAT))).toMatch(/; got "y{80}…"\.$/);
    expect(refusal(() => checkAppId(`${'z'.repeat(79)}!`, WHAT))).toMatch(/; got "z{79}!"\.$/);
  });
});

describe('chatBaseUrl', () => {
  it('builds https://<appId>.api-<region>.<domain>/v3, lower-cased', () => {
    expect(chatBaseUrl('App42', 'EU', 'Example.TEST', WHAT)).toBe('https://app42.api-eu.example.test/v3');
    expect(chatBaseUrl('app42', 'us', undefined, WHAT)).toBe('https://app42.api-us.cometchat.io/v3');
  });

  it.each(['example', 'a.b.c', 'localhost:8080', 'x.io:1', 'x.io:65535', 'a-b.io', `${'d'.repeat(63)}.io`, `${'a.'.repeat(125)}io`, `${'a.'.repeat(125)}iox:8080`])(
    'accepts the domain %j',
    (domain) => {
      expect(chatBaseUrl('app', 'us', domain, WHAT)).toBe(`https://app.api-us.${domain.toLowerCase()}/v3`);
    },
  );

  it.each([
    'https://x.io',
    'x.io/path',
    '',
    '.x.io',
    'x..io',
    'x.io.',
    '-x.io',
    'x-.io',
    'x.-io',
    'x.io-',
    'x_y.io',
    'x.io:',
    'x.io:123456',
    'x.io:8o',
    ':80',
    `${'d'.repeat(64)}.io`,
    `x.${'e'.repeat(64)}`,
    `${'a.'.repeat(126)}io`,
  ])('refuses the domain %j', (domain) => {
    expect(refusal(() => chatBaseUrl('app', 'us', domain, WHAT))).toMatch(/^createTest: domain must be a host name such as "cometchat\.io"; got /);
  });

  it('refuses a domain that is not a string', () => {
    expect(refusal(() => chatBaseUrl('app', 'us', 7, WHAT))).toBe('createTest: domain must be a host name such as "cometchat.io"; got number.');
  });
});

describe('checkBaseUrl', () => {
  it.each([
    ['https://proxy.example/v3', 'https://proxy.example/v3'],
    ['http://127.0.0.1:8080/v3/', 'http://127.0.0.1:8080/v3'],
    ['https://proxy.example/v3///', 'https://proxy.example/v3'],
    ['https://proxy.example', 'https://proxy.example'],
  ])('takes %j as %j', (baseUrl, expected) => {
    expect(checkBaseUrl(baseUrl, WHAT)).toBe(expected);
  });

  it.each([
    ['ftp://files.example/v3', '"ftp://files.example/v3"'],
    ['ftp://user:pw@files.example/v3', '"ftp://files.example/v3"'],
    ['proxy.example/v3', '"proxy.example/v3"'],
    [new URL('https://proxy.example/v3'), 'object'],
    [undefined, 'nothing'],
  ])('refuses %j as not an absolute http(s) URL, showing %s', (baseUrl, shown) => {
    expect(refusal(() => checkBaseUrl(baseUrl, WHAT))).toBe(`createTest: baseUrl must be an absolute http(s) URL; got ${shown}.`);
  });

  it.each(['https://user:pw@proxy.example/v3', 'https://user@proxy.example/v3', 'https://:pw@proxy.example/v3'])('refuses credentials in %j', (baseUrl) => {
    const message = refusal(() => checkBaseUrl(baseUrl, WHAT));
    expect(message).toBe('createTest: baseUrl must not carry credentials; the client sends its own headers.');
  });

  it.each(['https://proxy.example/v3?a=1', 'https://proxy.example/v3#top', 'https://proxy.example/v3?a=1#top'])('refuses a query or a fragment: %j', (baseUrl) => {
    expect(refusal(() => checkBaseUrl(baseUrl, WHAT))).toBe('createTest: baseUrl must not have a query or a fragment.');
  });
});

describe('checkSecret', () => {
  it('returns a usable secret as it is', () => {
    expect(checkSecret(' sk-1 ', 'apiKey', WHAT)).toBe(' sk-1 ');
  });

  it('asks whether the environment variable is set only when the secret is missing', () => {
    expect(refusal(() => checkSecret(undefined, 'apiKey', WHAT))).toBe(
      'createTest: apiKey is required: a non-empty string (is the environment variable set?).',
    );
    for (const value of ['', '  ', null, 42]) {
      expect(refusal(() => checkSecret(value, 'apiKey', WHAT))).toBe('createTest: apiKey is required: a non-empty string.');
    }
  });

  it.each(['sk\r1', 'sk\n1', 'sk\u00001'])('refuses a line break or NUL (%j) without showing the value', (value) => {
    const message = refusal(() => checkSecret(value, 'secret', WHAT));
    expect(message).toBe('createTest: secret contains a line break or NUL, which no header can carry.');
  });
});
