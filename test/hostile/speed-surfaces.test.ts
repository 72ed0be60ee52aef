/**
 * The receive path's shortcuts attacked through real frameworks (Express by supertest, Fastify by inject,
 * fetch with real Request objects): remembered Authorization headers, the remembered key prefix, the
 * remembered Content-Type spelling, the interned trigger. Each shortcut may change how fast an answer comes,
 * never which answer.
 */
import { readFileSync } from 'node:fs';
import express from 'express';
import Fastify from 'fastify';
import supertest from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { fetchHandler } from '../../adapters/fetch/index.js';
import { createBasicAuthVerifier, createWebhooks, type BasicAuthCredentials, type ParsedWebhook, type WebhookError } from '../../src/index.js';
import { basicAuthHeader } from '../../src/testing/index.js';

const valid = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const APP = JSON.parse(valid).appId as string;
/** Handlers run once the answer is sent: waits for them. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A message_sent delivery with some envelope fields and the message id replaced. */
function delivery(fields: Record<string, unknown> = {}, id = '1421'): string {
  const event = { ...JSON.parse(valid), ...fields };
  event.data.message.id = id;
  return JSON.stringify(event);
}

function receiver(auth: BasicAuthCredentials | BasicAuthCredentials[]) {
  const webhooks = createWebhooks({ auth, logger: {} });
  const events: ParsedWebhook[] = [];
  const errors: WebhookError[] = [];
  webhooks.on('message_sent', (event) => void events.push(event));
  webhooks.onUnknown((event) => void events.push(event));
  webhooks.onError((error) => void errors.push(error));
  const app = express();
  app.use(expressMiddleware(webhooks));
  const post = (body: string, headers: Record<string, string>) =>
    supertest(app).post('/').set(headers).serialize((data: unknown) => data as string).send(body);
  return { webhooks, events, errors, post };
}

describe('remembered Authorization headers', () => {
  const pair = { username: 'platform', password: 'correct horse' };
  const right = basicAuthHeader(pair.username, pair.password);

  it('answers a near miss of a remembered header as a receiver that remembers nothing does, over Express', async () => {
    const { post, events } = receiver(pair);
    const json = { 'content-type': 'application/json' };
    expect((await post(delivery(), { ...json, authorization: right })).status).toBe(200);
    const nearMisses = [
      right.slice(0, -1),
      right.slice(0, -4),
      `${right}A`,
      `${right}=`,
      right.slice(0, 6),
      `basic ${right.slice(6)}`,
      ...[6, 10, right.length - 3, right.length - 1].map((at) => right.slice(0, at) + (right[at] === 'A' ? 'B' : 'A') + right.slice(at + 1)),
    ];
    for (const [i, header] of nearMisses.entries()) {
      // What the full check alone answers: the remembered headers may only make a right answer come faster.
      const expected = createBasicAuthVerifier(pair)(header) ? 200 : 401;
      expect((await post(delivery({}, `near-${i}`), { ...json, authorization: header })).status, header).toBe(expected);
    }
    expect((await post(delivery({}, 'again'), { ...json, authorization: right })).status).toBe(200);
    expect(nearMisses.filter((header) => !createBasicAuthVerifier(pair)(header)).length).toBeGreaterThan(6);
    await settle();
    expect(events.length).toBe(2 + nearMisses.filter((header) => createBasicAuthVerifier(pair)(header)).length);
  });

  it('refuses lone surrogates and other non-ASCII look-alikes of a remembered header', () => {
    const verify = createBasicAuthVerifier(pair);
    expect(verify(right)).toBe(true);
    const at = right.length - 1;
    for (const unit of ['\uD800', '\uDC00', '\uFF21', '\u0141', String.fromCharCode(right.charCodeAt(at) + 0x100)]) {
      expect(verify(right.slice(0, at) + unit), JSON.stringify(unit)).toBe(false);
      expect(verify(right + unit)).toBe(false);
      expect(verify(unit + right.slice(1))).toBe(false);
    }
    expect(verify(right)).toBe(true);
  });

  it('keeps accepting every one of more valid headers than it remembers, and refuses the rest', async () => {
    const rotation = Array.from({ length: 12 }, (_, i) => ({ username: `user${i}`, password: `secret ${i}` }));
    const { post, events } = receiver(rotation);
    const json = { 'content-type': 'application/json' };
    for (let round = 0; round < 2; round++) {
      for (const [i, { username, password }] of rotation.entries()) {
        expect((await post(delivery({}, `r${round}u${i}`), { ...json, authorization: basicAuthHeader(username, password) })).status).toBe(200);
        expect((await post(delivery({}, `x${round}u${i}`), { ...json, authorization: basicAuthHeader(username, `${password}!`) })).status).toBe(401);
      }
    }
    await settle();
    expect(events.length).toBe(24);
  });

  it('a header remembered for one app binding is refused for another app, first time and every time after', async () => {
    const { post, events, errors } = receiver([
      { ...pair, appId: 'app-a' },
      { username: 'other', password: 'pw', appId: 'app-b' },
    ]);
    const json = { 'content-type': 'application/json', authorization: right };
    const statuses: number[] = [];
    for (const [i, appId] of ['app-a', 'app-b', 'app-a', 'app-b', 7, undefined].entries()) statuses.push((await post(delivery({ appId }, `id-${i}`), json)).status);
    expect(statuses).toEqual([200, 403, 200, 403, 403, 403]);
    await settle();
    expect(events.map((event) => event.appId)).toEqual(['app-a', 'app-a']);
    expect(errors.map((error) => error.code)).toEqual(['app_mismatch', 'app_mismatch', 'app_mismatch', 'app_mismatch']);
  });

  it('reads as many characters of a wrong guess wherever it differs from the remembered header', () => {
    const verify = createBasicAuthVerifier(pair);
    verify(right);
    const reads: number[] = [];
    for (let at = 6; at < right.length; at++) {
      const guess = right.slice(0, at) + (right[at] === 'A' ? 'B' : 'A') + right.slice(at + 1);
      const spy = vi.spyOn(String.prototype, 'charCodeAt');
      try {
        verify(guess);
        reads.push(spy.mock.calls.length);
      } finally {
        spy.mockRestore();
      }
    }
    expect(new Set(reads).size).toBe(1);
  });

  it('refuses a header over 8 KiB that starts with a remembered one', () => {
    const verify = createBasicAuthVerifier(pair);
    expect(verify(right)).toBe(true);
    // Node trims the trailing spaces off a header it received; a caller of the verifier hands them over.
    expect(verify(`${right}${' '.repeat(8 * 1024)}`)).toBe(false);
    expect(verify(`Basic ${' '.repeat(8 * 1024)}${right.slice(6)}`)).toBe(false);
    expect(verify(`Basic  ${right.slice(6)}`)).toBe(true);
    expect(verify(right)).toBe(true);
  });
});

describe('remembered key prefix', () => {
  const pair = { username: 'platform', password: 'correct horse' };
  const json = { 'content-type': 'application/json', authorization: basicAuthHeader(pair.username, pair.password) };

  it('apps and webhooks interleaved with one message id, whose escaped parts could spell each other, are different events; their repeats are repeats', async () => {
    const { post, events } = receiver(pair);
    const sources: Array<Record<string, unknown>> = [
      { appId: APP },
      { appId: 'other' },
      { appId: `${APP}:x` },
      { appId: 'a:b', webhook: 'c' },
      { appId: 'a', webhook: 'b:c' },
      { appId: 'a%3Ab', webhook: 'c' },
      { webhook: 'wh:2' },
      { webhook: 'wh%3A2' },
      { webhook: 'wh%253A2' },
      { webhook: undefined },
      { appId: undefined },
      { appId: undefined, webhook: undefined },
    ];
    // Twice each, interleaved: the first of each is an event, the second a duplicate of it.
    for (const fields of [...sources, ...sources]) expect((await post(delivery(fields, 'same'), json)).status).toBe(200);
    await settle();
    expect(events.map((event) => `${String(event.appId)}|${String(event.webhook)}`)).toEqual(
      sources.map((fields) => {
        const event = { ...JSON.parse(valid), ...fields };
        return `${String(event.appId)}|${String(event.webhook)}`;
      }),
    );
  });

  it('ids of 32 and 33 characters holding %, :, #, NUL or surrogates never meet, and their repeats are recognized', async () => {
    const { post, events } = receiver(pair);
    const ids: string[] = [];
    for (const length of [31, 32, 33]) {
      for (const special of ['%', ':', '#', '\0', '\uD83D\uDE00', '%3A', '%25', '%00', '%23']) {
        const base = 'a'.repeat(length - special.length);
        ids.push(base + special, special + base);
      }
      ids.push('a'.repeat(length));
    }
    ids.push('1', '01', '1.0');
    const unique = [...new Set(ids)];
    for (const id of [...unique, ...unique]) expect((await post(delivery({}, id), json)).status).toBe(200);
    await settle();
    expect(events.length).toBe(unique.length);
  });

});

describe('remembered Content-Type spelling', () => {
  const pair = { username: 'platform', password: 'correct horse' };
  const authorization = basicAuthHeader(pair.username, pair.password);
  const spellings: Array<[string, number]> = [
    ['Application/json', 200],
    ['text/plain', 415],
    ['application/json; charset=utf-8', 200],
    ['application/json; charset=latin1', 415],
    ['APPLICATION/JSON', 200],
    ['application/json', 200],
    ['application/vnd.chat+json; charset="UTF-8"', 200],
    ['application/jsonx', 415],
    ['Application/json', 200],
    ['application/json; charset=utf-16', 415],
  ];

  it('answers each spelling as itself, alternating, over Express, Fastify and fetch', async () => {
    const { post } = receiver(pair);
    const webhooks = createWebhooks({ auth: pair, logger: {} });
    const fastify = Fastify();
    await fastify.register(fastifyWebhooks, { webhooks, path: '/' });
    const handler = fetchHandler(createWebhooks({ auth: pair, logger: {} }));
    const seen: Array<[string, number, number, number]> = [];
    for (const [round, [contentType]] of [...spellings, ...spellings].entries()) {
      const body = delivery({}, `ct${round}`);
      const viaExpress = (await post(body, { 'content-type': contentType, authorization })).status;
      const viaFastify = (await fastify.inject({ method: 'POST', url: '/', headers: { 'content-type': contentType, authorization }, payload: body }))
        .statusCode;
      const viaFetch = (
        await handler(new Request('http://localhost/', { method: 'POST', headers: { 'content-type': contentType, authorization }, body }))
      ).status;
      seen.push([contentType, viaExpress, viaFastify, viaFetch]);
    }
    await fastify.close();
    expect(seen).toEqual([...spellings, ...spellings].map(([type, status]) => [type, status, status, status]));
  });

  it('refuses a repeated Content-Type handed over as an array after its single spelling was accepted', async () => {
    const webhooks = createWebhooks({ auth: pair, logger: {} });
    const answers: number[] = [];
    for (const contentType of ['application/json', ['application/json', 'application/json'], ['application/json']]) {
      const response = await new Promise<number>((resolve) =>
        webhooks.respond({ method: 'POST', headers: { 'content-type': contentType, authorization }, body: delivery({}, String(answers.length)) }, (r) =>
          resolve(r.status),
        ),
      );
      answers.push(response);
    }
    expect(answers).toEqual([200, 415, 200]);
  });
});

describe('the interned trigger', () => {
  const pair = { username: 'platform', password: 'correct horse' };
  const json = { 'content-type': 'application/json', authorization: basicAuthHeader(pair.username, pair.password) };

  it('never writes to an object a body parser left, and answers unknown and odd triggers as before', async () => {
    const webhooks = createWebhooks({ auth: pair, logger: {} });
    const typed: ParsedWebhook[] = [];
    const unknown: ParsedWebhook[] = [];
    webhooks.on('message_sent', (event) => void typed.push(event));
    webhooks.onUnknown((event) => void unknown.push(event));
    const writes: PropertyKey[] = [];
    const app = express();
    // A body parser of the app's own that leaves a watched object on the request.
    app.use(express.json(), (req, _res, next) => {
      req.body = new Proxy(req.body as object, {
        set: (target, key, value) => (writes.push(key), Reflect.set(target, key, value)),
        defineProperty: (target, key, descriptor) => (writes.push(key), Reflect.defineProperty(target, key, descriptor)),
      });
      next();
    });
    app.use(expressMiddleware(webhooks));
    const post = (body: string) => supertest(app).post('/').set(json).serialize((data: unknown) => data as string).send(body);
    const statuses: number[] = [];
    for (const trigger of ['message_sent', 'poll_closed', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'Message_sent']) {
      statuses.push((await post(JSON.stringify({ ...JSON.parse(delivery({}, `t-${trigger}`)), trigger }))).status);
    }
    statuses.push((await post('{"trigger":{"toString":"message_sent"},"data":{}}')).status);
    expect(writes).toEqual([]);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 400]);
    await settle();
    expect(typed.map((event) => event.trigger)).toEqual(['message_sent']);
    expect(unknown.map((event) => event.trigger)).toEqual(['poll_closed', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'Message_sent']);
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'message_sent')).toBe(false);
  });

  it('a body parsed here keeps its text exactly, a __proto__ key included', async () => {
    const webhooks = createWebhooks({ auth: pair, logger: {} });
    const seen: ParsedWebhook[] = [];
    webhooks.on('message_sent', (event) => void seen.push(event));
    const handler = fetchHandler(webhooks);
    const text = delivery().replace('{', '{"__proto__":{"polluted":true},');
    const response = await handler(new Request('http://localhost/', { method: 'POST', headers: json, body: text }));
    expect(response.status).toBe(200);
    await settle();
    expect(seen.length).toBe(1);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(seen[0]?.trigger).toBe('message_sent');
  });
});
