/**
 * The two errors of chat-webhooks/api and the redaction every text passes through (src/api/errors.ts), on
 * their own: what each error shows (name, own fields, JSON), the message of a ValidationError made from zod's
 * issues, `redact` over values of every shape, `redactAndCut`'s cut, and which causes `safeCause` keeps.
 * redaction.test.ts and secrets.test.ts check the same end to end through the clients.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, ValidationError, redact, redactAndCut, safeCause, validationError } from '../../src/api/errors.js';

const KEY = 'sk-errors-5e1f09a7c3';
const details = { code: 'http', method: 'GET', url: 'https://example.test/v3/users' } as const;

describe('ApiError', () => {
  it('is named ApiError, and has a cause only when given one', () => {
    const error = new ApiError('GET failed', details);
    expect(String(error)).toBe('ApiError: GET failed');
    expect('cause' in error).toBe(false);
    expect([error.status, error.attempts]).toEqual([0, 1]);
    const cause = new Error('socket');
    expect(new ApiError('GET failed', { ...details, cause }).cause).toBe(cause);
  });

  it('keeps every detail given, and JSON shows the fields a log needs, no cause', () => {
    const issues = [{ code: 'custom', path: ['data'], message: 'bad' }] as never;
    const error = new ApiError('m', { ...details, status: 429, body: { error: 'slow' }, requestId: 'r-1', attempts: 3, retryAfterMs: 1_000, issues, cause: new Error('c') });
    expect(error.issues).toBe(issues);
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'ApiError',
      message: 'm',
      code: 'http',
      status: 429,
      method: 'GET',
      url: details.url,
      body: { error: 'slow' },
      requestId: 'r-1',
      attempts: 3,
      retryAfterMs: 1_000,
    });
  });
});

describe('ValidationError', () => {
  it('is named ValidationError, has no issues unless given, and JSON shows name, message and issues', () => {
    const error = new ValidationError('refused');
    expect(String(error)).toBe('ValidationError: refused');
    expect(error.issues).toEqual([]);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ name: 'ValidationError', message: 'refused', issues: [] });
  });

  it('validationError names each issue by its path, (root) for the value itself, without the value', () => {
    const schema = z.object({ form: z.object({ id: z.string() }), n: z.number() }).refine(() => false, 'never');
    const refused = schema.safeParse({ form: { id: 7 }, n: KEY });
    const error = validationError('sendForm', refused.error!);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(/^sendForm: form\.id: [^;]+; n: [^;]+$/);
    expect(error.message).not.toContain(KEY);
    expect(error.issues).toBe(refused.error!.issues);
    const root = validationError('x', z.string().safeParse(1).error!);
    expect(root.message).toMatch(/^x: \(root\): /);
  });
});

describe('redact', () => {
  it('returns the very value when there is no secret', () => {
    const value = { a: [1, 'two'] };
    expect(redact(value, [])).toBe(value);
  });

  it('redacts strings, array items, object keys and values, at any depth; other values are kept as they are', () => {
    const date = new Date(0);
    const map = new Map([[KEY, KEY]]);
    const value = { [`k-${KEY}`]: [`a ${KEY} b`, { deep: KEY }, 3, true, null, undefined, date, map] };
    const clean = redact(value, [KEY]);
    expect(clean).toEqual({ 'k-[redacted]': ['a [redacted] b', { deep: '[redacted]' }, 3, true, null, undefined, date, map] });
    expect((clean as Record<string, unknown[]>)['k-[redacted]']![7]).toBe(map); // not a plain object: not walked
    expect(value[`k-${KEY}`]![0]).toBe(`a ${KEY} b`); // the original is left alone
    for (const scalar of [null, undefined, 5, false]) expect(redact(scalar, [KEY])).toBe(scalar);
  });

  it('two secrets side by side, or overlapping, become one [redacted]', () => {
    expect(redact('xAAAABBBBy', ['AAAA', 'BBBB'])).toBe('x[redacted]y');
    expect(redact('xAAAAAy', ['AAAA'])).toBe('x[redacted]y');
    expect(redact('AAAA-AAAA', ['AAAA'])).toBe('[redacted]-[redacted]');
  });

  it('finds a secret URL-encoded or JSON-escaped, and ignores an empty secret', () => {
    const secret = 'a/b "c"';
    expect(redact(`q=${encodeURIComponent(secret)}&j=${JSON.stringify(secret)}`, ['', secret])).toBe('q=[redacted]&j="[redacted]"');
    expect(redact('text', [''])).toBe('text');
  });
});

describe('redactAndCut', () => {
  it('cuts after redaction, marking the cut; a text of exactly max characters is kept whole', () => {
    expect(redactAndCut('abc', [], 3)).toBe('abc');
    expect(redactAndCut('abcd', [], 3)).toBe('abc…');
    expect(redactAndCut(`${KEY}${KEY}tail`, [KEY], 10)).toBe('[redacted]…');
  });
});

describe('safeCause', () => {
  it('keeps an error that carries no secret anywhere, causes included', () => {
    const cause = new Error('outer', { cause: new Error('inner', { cause: { detail: 'none' } }) });
    expect(safeCause(cause, [KEY])).toBe(cause);
  });

  it('replaces an error that mentions a secret with a plain one: message redacted, name kept', () => {
    const cause = new TypeError(`bad header ${KEY}`);
    const clean = safeCause(cause, [KEY, 'a-secret-not-there']) as Error;
    expect(clean).not.toBe(cause);
    expect(clean).toBeInstanceOf(Error);
    expect([clean.name, clean.message]).toEqual(['TypeError', 'bad header [redacted]']);
    expect(clean.cause).toBeUndefined();
  });

  it('looks in the stack, in own properties, and in causes up to four deep (a string or an object too)', () => {
    const inStack = new Error('plain');
    inStack.stack = `Error: plain\n    at send (${KEY})`;
    const inProperty = Object.assign(new Error('plain'), { request: { headers: { apikey: KEY } } });
    const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : new Error(`level ${depth}`, { cause: nest(depth - 1, leaf) }));
    for (const cause of [inStack, inProperty, nest(4, new Error(KEY)), nest(1, `header ${KEY}`), nest(2, { apikey: KEY })]) {
      expect(safeCause(cause, [KEY]), String(cause)).not.toBe(cause);
    }
  });

  it('finds a secret that JSON escapes in a string cause', () => {
    const quoted = new Error('outer', { cause: 'say "hi"\\' });
    expect(safeCause(quoted, ['say "hi"\\'])).not.toBe(quoted); // a string cause holding a secret that JSON escapes
  });

  it('stops at a cycle of causes', () => {
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(safeCause(cyclic, [KEY])).toBe(cyclic);
  });

  it('searches a cause that JSON cannot write through its text form', () => {
    const cause = new Error('outer', { cause: { size: 1n, toString: () => `token ${KEY}` } });
    expect(safeCause(cause, [KEY])).not.toBe(cause);
  });

  it('redacts a string cause; drops anything else that is not an error', () => {
    expect(safeCause(`failed with ${KEY}`, [KEY])).toBe('failed with [redacted]');
    expect(safeCause({ apikey: KEY }, [KEY])).toBeUndefined();
    expect(safeCause(42, [KEY])).toBeUndefined();
  });
});
