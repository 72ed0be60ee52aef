/**
 * Credentials bound to apps (issue 23, item 2): `auth: [{ username, password, appId }]`. A delivery whose
 * envelope `appId` is not one its matching credentials allow (or has none) is refused 403 `app_mismatch`,
 * reaches onError with the raw body, and is never dispatched, stored or forwarded; credentials without
 * `appId` deliver for any app. The adapters' part is in test/adapters/status-table.ts.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  createWebhooks,
  memoryInbox,
  type BasicAuthCredentials,
  type ParsedWebhook,
  type WebhookError,
  type Webhooks,
  type WebhooksOptions,
} from '../../src/index.js';
import { BodyArrival, type WebhookRequest } from '../../src/receive/http.js';
import { buildRequest } from '../../src/testing/index.js';

const acme = { username: 'acme', password: 'acme-secret', appId: 'app-acme' };
const globex = { username: 'globex', password: 'globex-secret', appId: ['app-globex', 'app-globex-eu'] };
const anyApp = { username: 'platform', password: 'rotation-secret' };

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8')) as Record<string, unknown>;
let serial = 0;
/** A message_sent of `appId` (left out when undefined), a new message each time: no repeat in the window. */
function messageOf(appId: unknown): string {
  const event = structuredClone(fixture) as { data: { message: { id: string } } };
  event.data.message.id = `m-${++serial}`;
  return JSON.stringify({ ...event, appId });
}

const open: Webhooks[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((webhooks) => webhooks.close()));
});

function receiver(options: Partial<WebhooksOptions> = {}) {
  const webhooks = createWebhooks({ auth: [acme, globex, anyApp], logger: {}, ...options });
  open.push(webhooks);
  const handled: unknown[] = [];
  const errors: WebhookError[] = [];
  webhooks.onAny((event) => void handled.push(event.appId));
  webhooks.onError((error) => void errors.push(error));
  const send = async (credentials: BasicAuthCredentials, body: string, request?: Partial<WebhookRequest>) => {
    const response = await webhooks.handle({ ...buildRequest(body, { auth: credentials }), ...request });
    await response.done;
    return response;
  };
  return { webhooks, handled, errors, send };
}

describe('auth: [{ username, password, appId }]', () => {
  it("a bound credential delivers its own app's events", async () => {
    const { handled, errors, send } = receiver();
    expect((await send(acme, messageOf('app-acme'))).status).toBe(200);
    expect((await send(globex, messageOf('app-globex'))).status).toBe(200);
    expect((await send(globex, messageOf('app-globex-eu'))).status).toBe(200);
    expect(handled).toEqual(['app-acme', 'app-globex', 'app-globex-eu']);
    expect(errors).toEqual([]);
  });

  it("is refused 403 app_mismatch for another app's event: onError gets the raw body, no handler runs", async () => {
    const { handled, errors, send } = receiver();
    const body = messageOf('app-globex');
    const response = await send(acme, body);
    expect(response.status).toBe(403);
    expect(response.body).toMatch(/appId "app-globex" is not an app its credentials are bound to/);
    expect(handled).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'app_mismatch', status: 403, rawBody: body });
    expect((errors[0]?.event as ParsedWebhook).appId).toBe('app-globex');
    // The other tenants' app ids are not told.
    expect(response.body).not.toMatch(/app-acme/);
  });

  it('is refused 403 for an event without appId (or an unusable one) when the credential is bound', async () => {
    const { handled, errors, send } = receiver();
    for (const appId of [undefined, '', null, { id: 'app-acme' }]) {
      expect((await send(acme, messageOf(appId))).status, JSON.stringify(appId)).toBe(403);
    }
    expect(handled).toEqual([]);
    expect(errors.map((error) => error.code)).toEqual(Array(4).fill('app_mismatch'));
    expect(errors[0]?.message).toMatch(/names no appId/);
  });

  it('is refused on the remembered-header path too (a second request with the same header)', async () => {
    const { handled, send } = receiver();
    expect((await send(acme, messageOf('app-acme'))).status).toBe(200);
    expect((await send(acme, messageOf('app-globex'))).status).toBe(403);
    expect((await send(acme, messageOf('app-acme'))).status).toBe(200);
    expect(handled).toEqual(['app-acme', 'app-acme']);
  });

  it('a credential without appId delivers for any app, also in a list with bound ones', async () => {
    const { handled, send } = receiver();
    expect((await send(anyApp, messageOf('app-acme'))).status).toBe(200);
    expect((await send(anyApp, messageOf('app-unlisted'))).status).toBe(200);
    expect((await send(anyApp, messageOf(undefined))).status).toBe(200);
    expect(handled).toEqual(['app-acme', 'app-unlisted', undefined]);
  });

  it('the same credentials listed for two apps deliver for both; listed once without appId, for any', async () => {
    const shared = { username: 'shared', password: 'pw' };
    const bound = receiver({ auth: [{ ...shared, appId: 'a' }, { ...shared, appId: 'b' }] });
    expect((await bound.send(shared, messageOf('a'))).status).toBe(200);
    expect((await bound.send(shared, messageOf('b'))).status).toBe(200);
    expect((await bound.send(shared, messageOf('c'))).status).toBe(403);
    const widened = receiver({ auth: [{ ...shared, appId: 'a' }, shared] });
    expect((await widened.send(shared, messageOf('c'))).status).toBe(200);
    const widenedFirst = receiver({ auth: [shared, { ...shared, appId: 'a' }] });
    expect((await widenedFirst.send(shared, messageOf('c'))).status).toBe(200);
  });

  it('a single bound pair (not a list) binds too', async () => {
    const { send } = receiver({ auth: acme });
    expect((await send(acme, messageOf('app-acme'))).status).toBe(200);
    expect((await send(acme, messageOf('app-globex'))).status).toBe(403);
  });

  it('reads a numeric appId as its decimal text, as keys do', async () => {
    const { handled, send } = receiver({ auth: { ...acme, appId: '2601' } });
    // An unknown trigger: the known ones' schemas type appId as a string (a number is an invalid_payload).
    const poll = (appId: unknown) => JSON.stringify({ trigger: 'poll_voted', data: {}, appId });
    expect((await send(acme, poll(2601))).status).toBe(200);
    expect((await send(acme, poll('2601'))).status).toBe(200);
    expect((await send(acme, poll(2602))).status).toBe(403);
    expect(handled).toEqual([2601, '2601']);
  });

  it('is checked before the payload: a foreign invalid payload is 403, not 200 + invalid_payload', async () => {
    const { errors, send } = receiver();
    const invalid = JSON.stringify({ trigger: 'message_sent', data: { message: { id: 1 } }, appId: 'app-globex' });
    expect((await send(acme, invalid)).status).toBe(403);
    expect(errors.map((error) => error.code)).toEqual(['app_mismatch']);
  });

  it('a body that is not an envelope is still 400: there is no appId to check', async () => {
    const { errors, send } = receiver();
    expect((await send(acme, '{"trigger":')).status).toBe(400);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json']);
  });

  it('is never stored in an inbox, nor forwarded by enqueue', async () => {
    const inbox = memoryInbox();
    const { webhooks, send } = receiver({ inbox, consume: false });
    expect((await send(acme, messageOf('app-globex'))).status).toBe(403);
    expect((await inbox.stats()).pending).toBe(0);
    expect((await send(acme, messageOf('app-acme'))).status).toBe(200);
    expect((await inbox.stats()).pending).toBe(1);

    const enqueue = vi.fn(async () => {});
    const forwarded = await webhooks.handle(buildRequest(messageOf('app-globex'), { auth: acme }), { enqueue });
    expect(forwarded.status).toBe(403);
    expect(enqueue).not.toHaveBeenCalled();
  });

  it('a body that arrives after the headers is checked all the same', async () => {
    const { handled, send } = receiver();
    const later = (body: string) => ({
      body: () => {
        const arrival = new BodyArrival();
        setTimeout(() => arrival.arrive(body), 5);
        return arrival;
      },
    });
    const foreign = messageOf('app-globex');
    expect((await send(acme, foreign, later(foreign))).status).toBe(403);
    const own = messageOf('app-acme');
    expect((await send(acme, own, later(own))).status).toBe(200);
    expect(handled).toEqual(['app-acme']);
  });

  it('refuses a binding that could admit nothing, naming the entry', () => {
    for (const appId of ['', [], [''], 42, ['a', 7], null]) {
      let error: unknown;
      try {
        createWebhooks({ auth: [anyApp, { ...acme, appId: appId as string }] });
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(appId)).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).option).toBe('auth[1].appId');
    }
  });
});
