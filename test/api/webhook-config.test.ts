/** Webhook configuration (spec 2.6) and the receiver's `auth` option derived from it. */
import { describe, expect, it } from 'vitest';
import { createWebhooks } from '../../src/index.js';
import { ValidationError, authFromWebhookConfig, webhookConfigSchema } from '../../src/api/index.js';
import { basicAuthHeader, buildRequest, createTestEvent } from '../../src/testing/index.js';

const config = {
  id: 'orders-hook',
  name: 'Orders',
  webhookURL: 'https://hooks.example.com/chat',
  useBasicAuth: true,
  username: 'platform',
  password: 's3cret-pass-word',
  enabled: true,
};
const paths = (value: unknown) => webhookConfigSchema.safeParse(value).error?.issues.map((issue) => issue.path.join('.'));

describe('webhookConfigSchema', () => {
  it('accepts a complete configuration and keeps unknown fields', () => {
    expect(webhookConfigSchema.parse({ ...config, triggers: ['message_sent'] })).toEqual({ ...config, triggers: ['message_sent'] });
  });

  it.each([
    ['ASCII', 'a'],
    ['emoji', '🚀'],
    ['CJK', '網'],
  ])('accepts id and name of 50 characters and refuses 51 (%s)', (_name, character) => {
    expect(webhookConfigSchema.safeParse({ ...config, id: character.repeat(50), name: character.repeat(50) }).success).toBe(true);
    expect(paths({ ...config, id: character.repeat(51) })).toEqual(['id']);
    expect(paths({ ...config, name: character.repeat(51) })).toEqual(['name']);
  });

  it.each(['id', 'name', 'webhookURL'])('requires %s', (field) => {
    const { [field as keyof typeof config]: _gone, ...rest } = config;
    expect(paths(rest)).toEqual([field]);
  });

  it.each(['http://hooks.example.com/chat', 'hooks.example.com/chat', 'ftp://hooks.example.com', ''])('refuses webhookURL %j (https only)', (url) => {
    expect(paths({ ...config, webhookURL: url })).toEqual(['webhookURL']);
  });

  it.each(['username', 'password'])('requires %s when useBasicAuth is true, not otherwise', (field) => {
    const { [field as 'username']: _gone, ...rest } = config;
    expect(paths(rest)).toEqual([field]);
    expect(paths({ ...rest, [field]: '' })).toEqual([field]);
    expect(webhookConfigSchema.safeParse({ ...rest, useBasicAuth: false }).success).toBe(true);
    const { useBasicAuth: _off, ...unset } = rest;
    expect(webhookConfigSchema.safeParse(unset).success).toBe(true);
  });

  it('refuses a username with a colon: Basic credentials split at the first one', () => {
    expect(paths({ ...config, username: 'plat:form' })).toEqual(['username']);
  });

  it('says what is wrong with each field', () => {
    const messages = (value: unknown) => webhookConfigSchema.safeParse(value).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    const { id: _id, name: _name, webhookURL: _url, ...rest } = config;
    expect(messages(rest)).toEqual(['id: id is required', 'name: name is required', 'webhookURL: webhookURL is required']);
    expect(messages({ ...config, id: 7, name: false })).toEqual(['id: id must be a string', 'name: name must be a string']);
    expect(messages({ ...config, id: '', name: '' })).toEqual(['id: id must not be empty', 'name: name must not be empty']);
    expect(messages({ ...config, id: 'i'.repeat(51), name: 'n'.repeat(51) })).toEqual([
      'id: id has at most 50 characters',
      'name: name has at most 50 characters',
    ]);
    expect(messages({ ...config, webhookURL: 'http://hooks.example.com' })).toEqual(['webhookURL: webhookURL must be an https URL']);
    expect(messages({ ...config, username: 'a:b' })).toEqual(['username: username must not contain ":" (Basic credentials split at the first one)']);
    const { username: _user, password: _password, ...noCredentials } = config;
    expect(webhookConfigSchema.safeParse(noCredentials).error?.issues).toEqual([
      { code: 'custom', path: ['username'], message: 'username is required when useBasicAuth is true' },
      { code: 'custom', path: ['password'], message: 'password is required when useBasicAuth is true' },
    ]);
  });

  it('checks the types of useBasicAuth and enabled', () => {
    expect(paths({ ...config, useBasicAuth: 'true' })).toContain('useBasicAuth');
    expect(paths({ ...config, enabled: 1 })).toEqual(['enabled']);
  });
});

describe('authFromWebhookConfig', () => {
  it('gives the credentials when Basic auth is on, false when it is off or unset', () => {
    expect(authFromWebhookConfig(config)).toEqual({ username: 'platform', password: 's3cret-pass-word' });
    expect(authFromWebhookConfig({ ...config, useBasicAuth: false })).toBe(false);
    expect(authFromWebhookConfig({})).toBe(false);
  });

  it('throws a ValidationError that does not show the password when a credential is missing', () => {
    try {
      authFromWebhookConfig({ useBasicAuth: true, password: config.password });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(/username is required when useBasicAuth is true/);
      expect(JSON.stringify(error) + String(error)).not.toContain(config.password);
    }
  });

  it.each([null, 'useBasicAuth', 1])('refuses %j with a ValidationError saying it needs a configuration object', (value) => {
    expect(() => authFromWebhookConfig(value as never)).toThrow(new ValidationError('authFromWebhookConfig needs a webhook configuration object.'));
  });

  it('names the call and the missing credential', () => {
    expect(() => authFromWebhookConfig({ useBasicAuth: true, username: 'platform' })).toThrow(
      'authFromWebhookConfig: the webhook configuration is not usable: password: password is required when useBasicAuth is true',
    );
  });

  it('is what createWebhooks takes: the configured credentials get in, others do not', async () => {
    const webhooks = createWebhooks({ auth: authFromWebhookConfig(config) });
    const event = createTestEvent('message_sent');
    const right = await webhooks.handle(buildRequest(event, { auth: { username: config.username, password: config.password } }));
    const wrong = await webhooks.handle(buildRequest(event, { headers: { authorization: basicAuthHeader('platform', 'guess') } }));
    expect([right.status, wrong.status]).toEqual([200, 401]);
    await webhooks.close();
  });

  it('turns authentication off with false: any request is taken', async () => {
    const webhooks = createWebhooks({ auth: authFromWebhookConfig({ ...config, useBasicAuth: false }) });
    const response = await webhooks.handle(buildRequest(createTestEvent('message_sent')));
    expect(response.status).toBe(200);
    await webhooks.close();
  });
});
