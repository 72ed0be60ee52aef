/**
 * The status table of docs/design.md as one suite every adapter runs through its real framework.
 * An adapter test supplies `mount(webhooks)`, which returns a function sending a raw HTTP-like request
 * through the framework and giving back what the client would see.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhooks, type Webhooks, type WebhookError, type ParsedWebhook, type WebhooksOptions } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';

export interface SentRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}
export interface ReceivedResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  body: string;
}
export type Send = (request: SentRequest) => Promise<ReceivedResponse>;

/** Reads a node:http client response to the end, as the sender sees it. */
export function collectResponse(res: IncomingMessage): Promise<ReceivedResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers as Record<string, string | undefined>,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
}
/** Mounts the receiver in a real framework instance; `close` releases it. */
export type Mount = (webhooks: Webhooks) => Promise<{ send: Send; close?: () => Promise<void> | void }>;

export const USER = 'platform';
export const PASSWORD = 'pä:ss wörd';
export const AUTH = basicAuthHeader(USER, PASSWORD);
export const LIMIT = 4096;

export const fixture = (trigger: string): string =>
  readFileSync(new URL(`../../fixtures/${trigger}.json`, import.meta.url), 'utf8');

const json = { 'content-type': 'application/json', authorization: AUTH };

/** The options a status-table case may set; `auth` replaces the one credential. */
export type ReceiverOptions = Pick<Partial<WebhooksOptions>, 'invalidPayload' | 'auth'>;

/** The app id of every fixture's envelope. */
export const FIXTURE_APP = '2601c4f1a2b3c4d5';

/** A receiver with recording handlers, as every adapter suite uses it. */
export function recordingReceiver(options: ReceiverOptions = {}) {
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, maxBodyBytes: LIMIT, ...options });
  const events: ParsedWebhook[] = [];
  const unknown: ParsedWebhook[] = [];
  const errors: WebhookError[] = [];
  webhooks.on('message_sent', (event) => void events.push(event));
  webhooks.onUnknown((event) => void unknown.push(event));
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, events, unknown, errors };
}

/** Waits until handlers that run after the response have run. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A message_sent body of exactly `bytes` UTF-8 bytes (padded inside the text). */
export function messageOfSize(bytes: number): string {
  const event = JSON.parse(fixture('message_sent'));
  event.data.message.data.text = '';
  const base = Buffer.byteLength(JSON.stringify(event));
  event.data.message.data.text = 'x'.repeat(bytes - base);
  const body = JSON.stringify(event);
  if (Buffer.byteLength(body) !== bytes) throw new Error('size mismatch');
  return body;
}

export function statusTableSuite(name: string, mount: Mount): void {
  describe(`${name}: docs/design.md status table`, () => {
    let close: (() => Promise<void> | void) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });
    async function setup(options?: ReceiverOptions) {
      const receiver = recordingReceiver(options);
      const mounted = await mount(receiver.webhooks);
      close = mounted.close;
      return { ...receiver, send: mounted.send };
    }

    it('answers a valid delivery 200 OK and calls its handler exactly once', async () => {
      const { send, events, errors } = await setup();
      const response = await send({ method: 'POST', headers: json, body: fixture('message_sent') });
      expect(response.status).toBe(200);
      expect(response.body).toBe('OK');
      await settle();
      expect(events).toHaveLength(1);
      expect(events[0]?.trigger).toBe('message_sent');
      expect(errors).toEqual([]);
    });

    it('takes `Application/json; charset=UTF-8` as JSON', async () => {
      const { send, events } = await setup();
      const headers = { ...json, 'content-type': 'Application/json; charset=UTF-8' };
      expect((await send({ method: 'POST', headers, body: fixture('message_sent') })).status).toBe(200);
      await settle();
      expect(events).toHaveLength(1);
    });

    it('delivers multi-byte UTF-8 text intact', async () => {
      const { send, events } = await setup();
      const event = JSON.parse(fixture('message_sent'));
      event.data.message.data.text = 'Grüße 👋🏽 こんにちは — ñ';
      expect((await send({ method: 'POST', headers: json, body: JSON.stringify(event) })).status).toBe(200);
      await settle();
      expect((events[0] as { data: { message: { data: { text: string } } } }).data.message.data.text).toBe(
        'Grüße 👋🏽 こんにちは — ñ',
      );
    });

    it('answers 405 with Allow: POST to other methods and dispatches nothing', async () => {
      const { send, events } = await setup();
      const response = await send({ method: 'GET', headers: { authorization: AUTH } });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
      await settle();
      expect(events).toEqual([]);
    });

    it('accepts a body of exactly the limit and answers 413 to one byte more', async () => {
      const { send, events, errors } = await setup();
      expect((await send({ method: 'POST', headers: json, body: messageOfSize(LIMIT) })).status).toBe(200);
      const over = await send({ method: 'POST', headers: json, body: messageOfSize(LIMIT + 1) });
      expect(over.status).toBe(413);
      await settle();
      expect(events).toHaveLength(1);
      expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
    });

    it('answers 415 to a non-JSON content type', async () => {
      const { send, events } = await setup();
      const headers = { ...json, 'content-type': 'text/plain' };
      expect((await send({ method: 'POST', headers, body: fixture('message_sent') })).status).toBe(415);
      await settle();
      expect(events).toEqual([]);
    });

    it('answers 401 with WWW-Authenticate to missing or wrong credentials, echoing nothing', async () => {
      const { send, events, errors } = await setup();
      const missing = await send({ method: 'POST', headers: { 'content-type': 'application/json' }, body: fixture('message_sent') });
      const wrong = await send({
        method: 'POST',
        headers: { ...json, authorization: basicAuthHeader(USER, 'wrong') },
        body: fixture('message_sent'),
      });
      for (const response of [missing, wrong]) {
        expect(response.status).toBe(401);
        expect(response.headers['www-authenticate']).toBe('Basic realm="webhooks"');
        expect(response.body).not.toContain('superhero');
      }
      await settle();
      expect(events).toEqual([]);
      expect(errors.map((error) => error.code)).toEqual(['unauthorized', 'unauthorized']);
    });

    it('answers 403 app_mismatch when the credentials are bound to another app, reporting the raw body', async () => {
      const { send, events, errors } = await setup({ auth: [{ username: USER, password: PASSWORD, appId: FIXTURE_APP }] });
      const own = await send({ method: 'POST', headers: json, body: fixture('message_sent') });
      const foreignBody = JSON.stringify({ ...JSON.parse(fixture('message_sent')), appId: 'app-other' });
      const foreign = await send({ method: 'POST', headers: json, body: foreignBody });
      expect([own.status, foreign.status]).toEqual([200, 403]);
      expect(foreign.headers['content-type']).toMatch(/^text\/plain/);
      expect(foreign.body).toMatch(/appId "app-other" is not an app its credentials are bound to/);
      await settle();
      expect(events).toHaveLength(1);
      expect(errors.map((error) => [error.code, error.status, error.rawBody])).toEqual([['app_mismatch', 403, foreignBody]]);
    });

    it('answers 400 to a body that is not JSON, reporting the raw body', async () => {
      const { send, errors } = await setup();
      const response = await send({ method: 'POST', headers: json, body: '{"trigger":"message_sent",' });
      expect(response.status).toBe(400);
      await settle();
      expect(errors[0]?.code).toBe('invalid_json');
      expect(errors[0]?.rawBody).toBe('{"trigger":"message_sent",');
    });

    it('answers 400 to JSON that is not an envelope', async () => {
      const { send, errors } = await setup();
      const response = await send({ method: 'POST', headers: json, body: '{"trigger":"message_sent","data":[]}' });
      expect(response.status).toBe(400);
      await settle();
      expect(errors[0]?.code).toBe('invalid_envelope');
    });

    it('answers 200 to an invalid payload by default and reports it with its issues', async () => {
      const { send, events, errors } = await setup();
      const body = '{"trigger":"message_sent","data":{"message":{"id":1}}}';
      expect((await send({ method: 'POST', headers: json, body })).status).toBe(200);
      await settle();
      expect(events).toEqual([]);
      expect(errors[0]?.code).toBe('invalid_payload');
      expect(errors[0]?.rawBody).toBe(body);
      expect(errors[0]?.issues?.some((issue) => issue.path.join('.') === 'data.message.id')).toBe(true);
    });

    it("answers 400 to an invalid payload with invalidPayload: 'reject'", async () => {
      const { send, errors } = await setup({ invalidPayload: 'reject' });
      const body = '{"trigger":"message_sent","data":{"message":{"id":1}}}';
      expect((await send({ method: 'POST', headers: json, body })).status).toBe(400);
      await settle();
      expect(errors[0]?.code).toBe('invalid_payload');
    });

    it('answers 200 to an unknown trigger and hands it to onUnknown', async () => {
      const { send, unknown, events } = await setup();
      const body = '{"trigger":"poll_voted","data":{"poll":{"id":"7"}}}';
      expect((await send({ method: 'POST', headers: json, body })).status).toBe(200);
      await settle();
      expect(unknown.map((event) => event.trigger)).toEqual(['poll_voted']);
      expect(events).toEqual([]);
    });

    // One answer per body, whatever the framework or the parser in front of it does with such a body.
    it('answers 415 with Connection: close to a compressed body (Content-Encoding: gzip), running no handler', async () => {
      const { send, events, errors } = await setup();
      const headers = { ...json, 'content-encoding': 'gzip' };
      const response = await send({ method: 'POST', headers, body: gzipSync(fixture('message_sent')) });
      expect(response.status).toBe(415);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      await settle();
      expect(events).toEqual([]);
      expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type']);
    });

    it('answers 415 to JSON declared in another charset (UTF-16), running no handler', async () => {
      const { send, events, errors } = await setup();
      const headers = { ...json, 'content-type': 'application/json; charset=utf-16le' };
      const response = await send({ method: 'POST', headers, body: Buffer.from(fixture('message_sent'), 'utf16le') });
      expect(response.status).toBe(415);
      await settle();
      expect(events).toEqual([]);
      expect(errors.map((error) => error.code)).toEqual(['unsupported_media_type']);
    });

    it('decodes invalid UTF-8 as frameworks do (U+FFFD) and answers 200', async () => {
      const { send, events, errors } = await setup();
      const [before, after] = fixture('message_sent').split('Suit is ready');
      const body = Buffer.concat([Buffer.from(`${before}Suit`), Buffer.from([0xff, 0xc3]), Buffer.from(` is ready${after}`)]);
      const response = await send({ method: 'POST', headers: json, body });
      expect(response.status).toBe(200);
      await settle();
      expect(errors).toEqual([]);
      expect((events[0] as { data: { message: { data: { text: string } } } }).data.message.data.text).toMatch(/^Suit\uFFFD+ is ready/);
    });

    it('answers 400 invalid_json to an empty body, with or without Content-Length: 0', async () => {
      const { send, errors } = await setup();
      const declared = await send({ method: 'POST', headers: { ...json, 'content-length': '0' }, body: '' });
      const bare = await send({ method: 'POST', headers: json });
      expect([declared.status, bare.status]).toEqual([400, 400]);
      expect(declared.headers['content-type']).toMatch(/^text\/plain/);
      await settle();
      expect(errors.map((error) => error.code)).toEqual(['invalid_json', 'invalid_json']);
    });

    it('answers 503 with Retry-After once closed', async () => {
      const { send, webhooks, events } = await setup();
      await webhooks.close();
      const response = await send({ method: 'POST', headers: json, body: fixture('message_sent') });
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
      await settle();
      expect(events).toEqual([]);
    });
  });
}
