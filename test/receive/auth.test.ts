import { describe, expect, it } from 'vitest';
import { ConfigurationError, createBasicAuthVerifier, createWebhooks, verifyBasicAuth } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';

const credentials = { username: 'platform', password: 's3cret' };
const header = (text: string, scheme = 'Basic') => `${scheme} ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('verifyBasicAuth', () => {
  it('accepts the right credentials', () => {
    expect(verifyBasicAuth(header('platform:s3cret'), credentials)).toBe(true);
  });

  it('refuses a wrong password, a wrong user, and each half swapped', () => {
    expect(verifyBasicAuth(header('platform:s3creT'), credentials)).toBe(false);
    expect(verifyBasicAuth(header('platforms:s3cret'), credentials)).toBe(false);
    expect(verifyBasicAuth(header('s3cret:platform'), credentials)).toBe(false);
    expect(verifyBasicAuth(header('platform:'), credentials)).toBe(false);
    expect(verifyBasicAuth(header(':s3cret'), credentials)).toBe(false);
  });

  it('refuses a missing, empty or malformed header', () => {
    for (const value of [undefined, null, '', 'Basic', 'Basic ', 'Basic !!!notbase64', header('no-colon-here'), 'platform:s3cret']) {
      expect(verifyBasicAuth(value, credentials)).toBe(false);
    }
  });

  it('refuses other schemes and takes the Basic scheme in any case', () => {
    expect(verifyBasicAuth(header('platform:s3cret', 'Bearer'), credentials)).toBe(false);
    expect(verifyBasicAuth(header('platform:s3cret', 'Digest'), credentials)).toBe(false);
    expect(verifyBasicAuth(header('platform:s3cret', 'basic'), credentials)).toBe(true);
    expect(verifyBasicAuth(header('platform:s3cret', 'BASIC'), credentials)).toBe(true);
  });

  it('splits at the first colon, so a password may contain colons', () => {
    const withColons = { username: 'platform', password: 'a:b::c:' };
    expect(verifyBasicAuth(header('platform:a:b::c:'), withColons)).toBe(true);
    expect(verifyBasicAuth(header('platform:a:b::c'), withColons)).toBe(false);
  });

  it('decodes credentials as UTF-8', () => {
    const unicode = { username: 'Zoë', password: 'пароль🔑' };
    expect(verifyBasicAuth(header('Zoë:пароль🔑'), unicode)).toBe(true);
    expect(verifyBasicAuth(basicAuthHeader('Zoë', 'пароль🔑'), unicode)).toBe(true);
    // The same characters in Latin-1 bytes are a different credential.
    expect(verifyBasicAuth(`Basic ${Buffer.from('Zoë:пароль🔑', 'latin1').toString('base64')}`, unicode)).toBe(false);
  });

  it('accepts any credential of a rotation list and refuses the rest', () => {
    const rotation = [credentials, { username: 'platform', password: 'next-secret' }];
    expect(verifyBasicAuth(header('platform:s3cret'), rotation)).toBe(true);
    expect(verifyBasicAuth(header('platform:next-secret'), rotation)).toBe(true);
    expect(verifyBasicAuth(header('platform:old-secret'), rotation)).toBe(false);
  });

  it('one verifier keeps answering right after remembering accepted headers', () => {
    const verify = createBasicAuthVerifier(credentials);
    const variants = ['Basic', 'basic', 'BASIC', 'bAsIc'].flatMap((scheme) => [header('platform:s3cret', scheme), `${header('platform:s3cret', scheme)} `, ` ${header('platform:s3cret', scheme)}`]);
    for (let round = 0; round < 2; round++) {
      for (const value of variants) expect(verify(value)).toBe(true);
      expect(verify(header('platform:s3creT'))).toBe(false);
      expect(verify(header('platform:s3cret').slice(0, -1))).toBe(false);
      expect(verify(header('platform:s3cret!'))).toBe(false);
    }
  });

  it('refuses an enormous header without decoding it', () => {
    expect(verifyBasicAuth(`Basic ${'A'.repeat(100_000)}`, credentials)).toBe(false);
  });

  it('rejects unusable credential configurations with a clear message', () => {
    expect(() => createBasicAuthVerifier([])).toThrow(ConfigurationError);
    expect(() => createBasicAuthVerifier([])).toThrow(/no credentials/);
    expect(() => createBasicAuthVerifier({ username: '', password: 'x' })).toThrow(/`auth.username` is empty/);
    expect(() => createBasicAuthVerifier({ username: 'a:b', password: 'x' })).toThrow(/must not contain ':'/);
    expect(() => createBasicAuthVerifier({ username: 'a' } as never)).toThrow(/`auth.password` is missing/);
    expect(() => createBasicAuthVerifier({ username: 1, password: 'x' } as never)).toThrow(/`auth.username` must be a string, got number/);
    expect(() => createBasicAuthVerifier([{ username: 'a', password: 'x' }, 'a:x'] as never)).toThrow(/`auth\[1\]` must be \{ username, password \}, got string/);
  });

  it('names the option at fault and says what to give, for each unusable configuration', () => {
    const refusal = (credentials: unknown): ConfigurationError => {
      try {
        createBasicAuthVerifier(credentials as never);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError);
        return error as ConfigurationError;
      }
      return expect.unreachable('should have been refused');
    };
    const cases: [unknown, string, string][] = [
      [[], 'auth', '`auth` lists no credentials; give at least one { username, password }.'],
      [null, 'auth', '`auth` must be { username, password }, got null.'],
      [[{ username: 'a', password: 'x' }, null], 'auth[1]', '`auth[1]` must be { username, password }, got null.'],
      [[{ username: 'a', password: 'x' }, 7], 'auth[1]', '`auth[1]` must be { username, password }, got number.'],
      [{ username: 'a:b', password: 'x' }, 'auth.username', "`auth.username` must not contain ':'."],
      [[{ username: 'a', password: 'x' }, { username: 'c:d', password: 'y' }], 'auth[1].username', "`auth[1].username` must not contain ':'."],
      [
        { username: 'a', password: 'x', appId: [] },
        'auth.appId',
        '`auth.appId` must be an app id or a non-empty list of app ids (strings), got []; leave it out for credentials that deliver for any app.',
      ],
      [
        { username: 'a', password: 'x', appId: () => 'app' },
        'auth.appId',
        '`auth.appId` must be an app id or a non-empty list of app ids (strings), got function; leave it out for credentials that deliver for any app.',
      ],
    ];
    for (const [credentials, option, message] of cases) {
      const error = refusal(credentials);
      expect([error.option, error.message]).toEqual([option, message]);
    }
  });
});

describe('createWebhooks auth option', () => {
  it('names the credential an unset environment variable left undefined', () => {
    // As `auth: { username: process.env.WEBHOOK_USERNAME, … }` gives when the variable is not set.
    const unset = { username: undefined, password: 'x' } as never;
    expect(() => createWebhooks({ auth: unset })).toThrowError(expect.objectContaining({ name: 'ConfigurationError', option: 'auth.username' }));
    expect(() => createWebhooks({ auth: unset })).toThrow(
      '`auth.username` is missing: give the username configured on the webhook (if it comes from an environment variable, that variable is not set).',
    );
    const rotating = [{ username: 'a', password: 'x' }, { username: 'b', password: undefined }] as never;
    expect(() => createWebhooks({ auth: rotating })).toThrowError(expect.objectContaining({ option: 'auth[1].password' }));
  });

  it('refuses to start without `auth`, naming the fix', () => {
    expect(() => createWebhooks({} as never)).toThrowError(expect.objectContaining({ name: 'ConfigurationError', option: 'auth' }));
    expect(() => createWebhooks({} as never)).toThrow(ConfigurationError);
    expect(() => createWebhooks({} as never)).toThrow(/auth: false/);
  });

  it('accepts unauthenticated requests only with an explicit auth: false', async () => {
    const webhooks = createWebhooks({ auth: false });
    const response = await webhooks.handle({ method: 'POST', headers: {}, body: '{"trigger":"x","data":{}}' });
    expect(response.status).toBe(200);
  });

  it('an Authorization sent twice is refused, even with the right credentials both times', async () => {
    const webhooks = createWebhooks({ auth: credentials, logger: {} });
    const right = header('platform:s3cret');
    const send = (authorization: string | string[]) =>
      webhooks.handle({ method: 'POST', headers: { authorization }, body: '{"trigger":"x","data":{}}' });
    expect((await send(right)).status).toBe(200);
    expect((await send([right])).status).toBe(200);
    for (const twice of [[right, right], [right, ''], ['', right], [right, 'Basic']]) expect((await send(twice)).status, String(twice)).toBe(401);
  });
});
