/**
 * The management client against the local platform: `POST /apps` with `key` and `secret`, the body checked
 * before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ValidationError, appCreateSchema, createManagementClient } from '../../src/api/index.js';
import { type Platform, startPlatform } from './platform-server.js';

const key = 'mgmt-key-7f3a9c';
const secret = 'mgmt-secret-b81d44e0';

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform({ appId: 'x', apiKey: 'unused', key, secret, users: {} });
});
afterAll(() => platform.close());

const client = (options: Partial<Parameters<typeof createManagementClient>[0]> = {}) =>
  createManagementClient({ key, secret, baseUrl: platform.url, retry: { retries: 2, minDelayMs: 5 }, ...options });

describe('apps.create', () => {
  it('POSTs name, region and version "3" by default with key, secret and JSON headers', async () => {
    const answer = await client().apps.create<{ data: { appId: string; region: string } }>({ name: 'Support desk', region: 'EU' });
    const request = platform.requests.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/apps');
    expect(request.headers.key).toBe(key);
    expect(request.headers.secret).toBe(secret);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.accept).toBe('application/json');
    expect(request.headers.apikey).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({ name: 'Support desk', version: '3', region: 'eu' });
    expect(answer.data).toMatchObject({ region: 'eu' });
  });

  it('sends a given version and extra fields as they are', async () => {
    await client().apps.create({ name: 'n', region: 'in', version: '4', plan: 'pro' });
    expect(JSON.parse(platform.requests.at(-1)!.body)).toEqual({ name: 'n', region: 'in', version: '4', plan: 'pro' });
  });

  it.each([
    [{ name: 'n', region: 'ap' }, ['region']],
    [{ name: 'n' }, ['region']],
    [{ region: 'us' }, ['name']],
    [{ name: '  ', region: 'us' }, ['name']],
    [{ name: 'n', region: 'us', version: 3 }, ['version']],
    [{ name: 'n', region: 'us', version: '' }, ['version']],
  ])('refuses %j with a ValidationError at %j and sends nothing', async (app, path) => {
    const before = platform.requests.length;
    const error = await client().apps.create(app as never).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    expect((error as ValidationError).message).toContain(path[0]);
    expect(platform.requests.length).toBe(before);
  });

  it('reports wrong credentials as a 401 ApiError', async () => {
    const error = await client({ secret: 'nope-nope' }).apps.create({ name: 'n', region: 'us' }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, method: 'POST', url: `${platform.url}/apps` });
  });

  it('does not repeat a create that failed with a 500, but does after a 429', async () => {
    let before = platform.requests.length;
    platform.plan({ status: 500, body: { error: 'boom' } });
    await expect(client().apps.create({ name: 'n', region: 'us' })).rejects.toMatchObject({ status: 500 });
    expect(platform.requests.length - before).toBe(1);

    before = platform.requests.length;
    platform.plan({ status: 429, headers: { 'retry-after': '0' } });
    await expect(client().apps.create({ name: 'n', region: 'us' })).resolves.toMatchObject({ data: { name: 'n' } });
    expect(platform.requests.length - before).toBe(2);
  });

  it('requires key, secret and baseUrl at creation', () => {
    expect(() => createManagementClient({ key: '', secret, baseUrl: platform.url })).toThrow(/key is required/);
    expect(() => createManagementClient({ key, secret: undefined as never, baseUrl: platform.url })).toThrow(/secret is required/);
    expect(() => createManagementClient({ key, secret } as never)).toThrow(/baseUrl must be an absolute http\(s\) URL/);
  });

  it.each([null, undefined, 'mgmt-key'])('refuses %j for options with a ValidationError naming what it needs', (options) => {
    expect(() => createManagementClient(options as never)).toThrow(new ValidationError('createManagementClient needs { key, secret, baseUrl }.'));
  });

  it('names the call and each field of a bad app', async () => {
    const error = await client().apps.create({ name: '', region: 'mars' }).catch((reason: unknown) => reason);
    expect((error as ValidationError).message).toBe(
      'apps.create: the app is not valid: name: name is required; region: region must be one of us, eu, in',
    );
  });
});

describe('appCreateSchema', () => {
  it('fills version "3" and lower-cases the region', () => {
    expect(appCreateSchema.parse({ name: 'a', region: 'US' })).toEqual({ name: 'a', region: 'us', version: '3' });
  });

  it('trims the region and the name', () => {
    expect(appCreateSchema.parse({ name: ' Desk ', region: ' Eu\n' })).toEqual({ name: 'Desk', region: 'eu', version: '3' });
  });

  it('says what is wrong: a blank name, a region outside the three', () => {
    const messages = (app: unknown) => appCreateSchema.safeParse(app).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect(messages({ name: ' ', region: 'us' })).toEqual(['name: name is required']);
    expect(messages({ name: 'n', region: 'ap' })).toEqual(['region: region must be one of us, eu, in']);
    expect(messages({ name: 'n', region: 7 })).toEqual(['region: region must be one of us, eu, in']);
  });
});
