/**
 * WebhookError and ConfigurationError as onError and the options check hand them out (src/dispatch/errors.ts):
 * the status by code, details kept only when given (a logged or inspected error shows no empty fields), and
 * describeCause for values String() cannot convert.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, WebhookError } from '../../src/index.js';
import { describeCause } from '../../src/dispatch/errors.js';

describe('WebhookError', () => {
  it('carries the status its code is answered with, and none for failures after the 200', () => {
    const statuses = Object.fromEntries(
      (
        [
          'payload_too_large',
          'unsupported_media_type',
          'unauthorized',
          'body_timeout',
          'body_unavailable',
          'invalid_json',
          'invalid_envelope',
          'invalid_payload',
          'inbox_failed',
          'enqueue_failed',
          'handler_failed',
          'handler_timeout',
          'handler_interrupted',
          'shutdown_abandoned',
          'catch_up_failed',
        ] as const
      ).map((code) => [code, new WebhookError(code, 'm').status]),
    );
    expect(statuses).toEqual({
      payload_too_large: 413,
      unsupported_media_type: 415,
      unauthorized: 401,
      body_timeout: 408,
      body_unavailable: 500,
      invalid_json: 400,
      invalid_envelope: 400,
      invalid_payload: 400,
      inbox_failed: 503,
      enqueue_failed: 503,
      handler_failed: undefined,
      handler_timeout: undefined,
      handler_interrupted: undefined,
      shutdown_abandoned: undefined,
      catch_up_failed: undefined,
    });
  });

  it('keeps every detail given, under its own name', () => {
    const cause = new Error('below');
    const issues = [{ code: 'custom', path: ['data'], message: 'bad', input: 1 }] as unknown as WebhookError['issues'];
    const error = new WebhookError('handler_failed', 'failed', {
      cause,
      issues,
      rawBody: '{}',
      event: { trigger: 'x' },
      key: 'k',
      attempt: 2,
      willRetry: false,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'WebhookError', code: 'handler_failed', message: 'failed', cause, issues, rawBody: '{}', key: 'k', attempt: 2, willRetry: false });
    expect(error.event).toEqual({ trigger: 'x' });
  });

  it('a detail not given is undefined, and no cause is an absent one', () => {
    const error = new WebhookError('invalid_json', 'bad');
    for (const name of ['issues', 'rawBody', 'event', 'key', 'attempt', 'willRetry'] as const) expect(error[name], name).toBeUndefined();
    // Error's own cause: absent, not present as undefined (`'cause' in error` is how Node's inspect decides).
    expect('cause' in error).toBe(false);
    expect(inspect(error)).not.toMatch(/\[cause\]/);
    // Falsy details that were given are kept.
    const given = new WebhookError('handler_failed', 'm', { cause: 0, rawBody: '', key: '', attempt: 0, willRetry: false, event: null });
    expect(given).toMatchObject({ cause: 0, rawBody: '', key: '', attempt: 0, willRetry: false, event: null });
  });
});

describe('ConfigurationError', () => {
  it('names the option at fault', () => {
    const error = new ConfigurationError('maxBodyBytes', 'too small');
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'ConfigurationError', option: 'maxBodyBytes', message: 'too small' });
  });
});

describe('describeCause', () => {
  it('an error by its message, anything else as String() reads it', () => {
    expect(describeCause(new Error('broke'))).toBe('broke');
    expect(describeCause('text')).toBe('text');
    expect(describeCause(42)).toBe('42');
    expect(describeCause(undefined)).toBe('undefined');
  });

  it('values String() cannot convert by their tag, and a value even that fails on as such', () => {
    expect(describeCause(Object.create(null))).toBe('[object Object]');
    expect(describeCause({ toString: () => { throw new Error('no'); } })).toBe('[object Object]');
    // An error whose message getter throws is described without it.
    const error = new Error('hidden');
    Object.defineProperty(error, 'message', { get: () => { throw new Error('no'); } });
    expect(describeCause(error)).toBe('[object Error]');
    // A proxy that throws on every look-up, Symbol.toStringTag included.
    const hostile = new Proxy({}, { get: () => { throw new Error('no'); }, getPrototypeOf: () => { throw new Error('no'); } });
    expect(describeCause(hostile)).toBe('a value that cannot be described');
  });
});
