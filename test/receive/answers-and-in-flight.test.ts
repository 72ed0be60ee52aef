/**
 * How answers are said and what they leave behind (src/receive/intake/answers.ts), and the in-flight list close()
 * drains (src/receive/intake/in-flight.ts): onDuplicate's context and failures, log records of refusals and repeats,
 * the handler context, and errands finishing in any order (found by mutation testing, tools/mutation/results.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { createWebhooks, memoryInbox, type HandlerContext } from '../../src/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { auth, fixture, messageSent, receiver, sleep } from './support.js';

const body = fixture('message_sent');
const request = (text: string, options: { password?: string } = {}) =>
  buildRequest(text, { auth: { ...auth, password: options.password ?? auth.password } });

describe('onDuplicate', () => {
  it('gets the same key the first run saw, and when the repeat arrived', async () => {
    const { webhooks } = receiver();
    const contexts: HandlerContext[] = [];
    const duplicates: Array<{ key: string; receivedAt: number }> = [];
    webhooks.on('message_sent', (_event, context) => void contexts.push(context));
    webhooks.onDuplicate((_event, context) => void duplicates.push(context));
    await (await webhooks.handle(request(body))).done;
    const before = Date.now();
    await (await webhooks.handle(request(body))).done;
    expect(contexts).toHaveLength(1);
    expect(contexts[0]!.attempt).toBe(1);
    expect(duplicates).toHaveLength(1);
    expect(duplicates[0]!.key).toBe(contexts[0]!.key);
    expect(duplicates[0]!.key).toMatch(/:message_sent:/);
    expect(duplicates[0]!.receivedAt).toBeGreaterThanOrEqual(before);
    expect(duplicates[0]!.receivedAt).toBeLessThanOrEqual(Date.now());
  });

  it('done waits for an asynchronous onDuplicate handler', async () => {
    const { webhooks } = receiver();
    const finished: string[] = [];
    webhooks.onDuplicate(async () => {
      await sleep(20);
      finished.push('duplicate');
    });
    await (await webhooks.handle(request(body))).done;
    await (await webhooks.handle(request(body))).done;
    expect(finished).toEqual(['duplicate']);
  });

  it('a failing onDuplicate handler reaches onError with its cause and the event; the others still run', async () => {
    const { webhooks, errors } = receiver();
    const thrown = new Error('sync duplicate');
    const rejected = new Error('async duplicate');
    const last = vi.fn();
    webhooks.onDuplicate(() => {
      throw thrown;
    });
    webhooks.onDuplicate(async () => {
      await sleep(5);
      throw rejected;
    });
    webhooks.onDuplicate(last);
    await (await webhooks.handle(request(body))).done;
    const repeat = await webhooks.handle(request(body));
    expect(repeat.status).toBe(200);
    await repeat.done;
    expect(last).toHaveBeenCalledTimes(1);
    expect(errors.map((error) => [error.code, error.cause])).toEqual([
      ['handler_failed', thrown],
      ['handler_failed', rejected],
    ]);
    expect(errors[0]!.message).toBe('An onDuplicate handler failed: sync duplicate');
    expect(errors[1]!.event).toMatchObject({ trigger: 'message_sent' });
  });

  it('an onDuplicate handler failing with a value String() cannot convert still reaches onError', async () => {
    const { webhooks, errors } = receiver();
    const last = vi.fn();
    const unprintable = Object.create(null) as object;
    webhooks.onDuplicate(() => {
      throw unprintable;
    });
    webhooks.onDuplicate(() => Promise.reject(unprintable));
    webhooks.onDuplicate(last);
    await (await webhooks.handle(request(body))).done;
    await (await webhooks.handle(request(body))).done;
    expect(last).toHaveBeenCalledTimes(1);
    expect(errors.map((error) => [error.code, error.cause])).toEqual([
      ['handler_failed', unprintable],
      ['handler_failed', unprintable],
    ]);
    expect(errors[0]!.message).toBe('An onDuplicate handler failed: [object Object]');
  });

  it('an asynchronous onError reporting a failed onDuplicate is waited for', async () => {
    const webhooks = createWebhooks({ auth, logger: {} });
    const reported: string[] = [];
    webhooks.onError(async (error) => {
      await sleep(20);
      reported.push(error.code);
    });
    webhooks.onDuplicate(() => {
      throw new Error('x');
    });
    await (await webhooks.handle(request(body))).done;
    await (await webhooks.handle(request(body))).done;
    expect(reported).toEqual(['handler_failed']);
  });
});

describe('log records', () => {
  it('a refusal is logged at debug with its code and status', async () => {
    const debug = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { debug } });
    await webhooks.handle(request(body, { password: 'wrong' }));
    expect(debug).toHaveBeenCalledWith({ code: 'unauthorized', status: 401 }, expect.stringMatching(/^Refused a webhook request: /));
  });

  it('a repeat is logged at debug with its trigger and key', async () => {
    const debug = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { debug } });
    let key = '';
    webhooks.on('message_sent', (_event, context) => void (key = context.key));
    await (await webhooks.handle(request(body))).done;
    await (await webhooks.handle(request(body))).done;
    expect(debug).toHaveBeenCalledTimes(1);
    expect(debug).toHaveBeenCalledWith({ trigger: 'message_sent', key }, 'Ignored a repeated delivery.');
  });
});

describe('answers', () => {
  it('an invalid payload in reject mode is 400 naming the trigger only, onError getting the details', async () => {
    const { webhooks, errors } = receiver({ invalidPayload: 'reject' });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    const invalid = JSON.stringify({ ...JSON.parse(body), data: { hostile_key: 1 } });
    const response = await webhooks.handle(request(invalid));
    expect(response.status).toBe(400);
    expect(response.body).toBe('The message_sent payload does not match its schema; onError has the details.');
    await response.done;
    expect(errors.map((error) => error.code)).toEqual(['invalid_payload']);
    expect(handler).not.toHaveBeenCalled();
  });

  it('an invalid payload in accept mode is 200 and goes to onError, not to the handlers', async () => {
    const { webhooks, errors } = receiver();
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    const invalid = JSON.stringify({ ...JSON.parse(body), data: { hostile_key: 1 } });
    const response = await webhooks.handle(request(invalid));
    expect(response.status).toBe(200);
    expect(response.body).toBe('OK');
    await response.done;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'invalid_payload', rawBody: invalid, event: { trigger: 'message_sent' } });
    expect(handler).not.toHaveBeenCalled();
  });

  it('413 and 408 name the limit, and every answer is plain text', async () => {
    const { webhooks, errors } = receiver({ maxBodyBytes: 100, bodyTimeoutMs: 20 });
    const tooLarge = await webhooks.handle(request(body));
    expect(tooLarge.body).toBe('The body exceeds 100 bytes.');
    expect(tooLarge.headers['content-type']).toBe('text/plain; charset=utf-8');
    const late = await webhooks.handle({ ...request('{}'), body: () => new Promise(() => undefined) });
    expect(late.status).toBe(408);
    expect(late.body).toBe('The body did not arrive within 20 ms.');
    expect(late.headers['content-type']).toBe('text/plain; charset=utf-8');
    const unreadable = await webhooks.handle({ ...request('{}'), body: async () => Promise.reject(new Error('x')) });
    expect(unreadable.body).toBe('The request body could not be read.');
    const method = await webhooks.handle({ ...request('{}'), method: 'GET' });
    expect(method.headers).toEqual({ 'content-type': 'text/plain; charset=utf-8', allow: 'POST' });
    await Promise.all([tooLarge.done, late.done, unreadable.done]);
    expect(errors.map((error) => error.status)).toEqual([413, 408, 400]);
  });

  it('a refused request answers with the plain-text type even with extra headers (401)', async () => {
    const { webhooks } = receiver();
    const response = await webhooks.handle(request(body, { password: 'wrong' }));
    expect(response.status).toBe(401);
    expect(response.headers).toEqual({
      'content-type': 'text/plain; charset=utf-8',
      'www-authenticate': 'Basic realm="webhooks"',
      connection: 'close',
    });
  });

  it('a handler context key is computed from the body when the trigger documents none', async () => {
    const { webhooks } = receiver();
    const keys: string[] = [];
    webhooks.onUnknown((_event, context) => void keys.push(context.key));
    await (await webhooks.handle(request('{"trigger":"poll_voted","data":{"a":1}}'))).done;
    await (await webhooks.handle(request('{"trigger":"poll_voted","data":{"a":2}}'))).done;
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^::poll_voted:#/);
    expect(keys[0]).not.toBe(keys[1]);
  });
});

describe('more answers', () => {
  it('503 during shutdown says to retry later', async () => {
    const { webhooks } = receiver();
    await webhooks.close({ timeoutMs: 10 });
    expect((await webhooks.handle(request(body))).body).toBe('The receiver is shutting down; retry later.');
  });

  it('an unforeseen failure is logged with its reason and message, and a logger without error() still gets a 500', async () => {
    const broken = {
      get() {
        throw new Error('header store broke');
      },
    };
    const error = vi.fn();
    const logged = createWebhooks({ auth: false, logger: { error } });
    expect((await logged.handle({ method: 'POST', headers: broken, body })).status).toBe(500);
    expect(error).toHaveBeenCalledWith({ reason: 'header store broke' }, 'Unexpected failure while handling a webhook request.');
    const bare = createWebhooks({ auth: false, logger: {} });
    expect((await bare.handle({ method: 'POST', headers: broken, body })).status).toBe(500);
  });

  it('a key override runs once per delivery (it names repeats), not again when the key of a repeat is read', async () => {
    const keyOf = vi.fn(() => 'the-key');
    const { webhooks } = receiver({ idempotencyKeys: { message_sent: keyOf } });
    webhooks.on('message_sent', () => undefined);
    await (await webhooks.handle(request(body))).done;
    const repeat = await webhooks.handle(request(body));
    await repeat.done;
    expect(repeat).toMatchObject({ status: 200, body: 'OK' });
    expect(keyOf).toHaveBeenCalledTimes(2);
    // With an onDuplicate handler the repeat's key is read: the key already made is given.
    const keys: string[] = [];
    webhooks.onDuplicate((_event, context) => void keys.push(context.key));
    await (await webhooks.handle(request(body))).done;
    expect(keyOf).toHaveBeenCalledTimes(3);
    expect(keys).toEqual(['2601c4f1a2b3c4d5:wh_chat_events:message_sent:the-key']);
  });

  it('an answer that fails once the inbox has spoken is still given, as a 500', async () => {
    // The inbox finds a repeat; logging it throws (a broken user logger): the answer still goes out.
    const error = vi.fn();
    const debug = vi.fn((_fields: object, message?: string) => {
      if (message === 'Ignored a repeated delivery.') throw new Error('logger broke');
    });
    const webhooks = createWebhooks({ auth, logger: { debug, error }, inbox: memoryInbox(), consume: false });
    expect((await webhooks.handle(request(body))).status).toBe(200);
    const repeat = await Promise.race([webhooks.handle(request(body)), sleep(2000).then(() => undefined)]);
    expect(repeat).toMatchObject({ status: 500, body: 'Internal error.' });
    expect(error).toHaveBeenCalledWith({ reason: 'logger broke' }, 'Unexpected failure while handling a webhook request.');
  });

  it('a repeat with onDuplicate handlers is answered 200 OK as text', async () => {
    const { webhooks } = receiver();
    webhooks.onDuplicate(() => undefined);
    await (await webhooks.handle(request(body))).done;
    const repeat = await webhooks.handle(request(body));
    expect(repeat).toMatchObject({ status: 200, body: 'OK', headers: { 'content-type': 'text/plain; charset=utf-8' } });
  });

  it('the key a handler sees is the one a repeat of the same text gets, the body as sent (not re-serialized)', async () => {
    const { webhooks } = receiver();
    const seen: string[] = [];
    const text = '{ "trigger": "poll_voted",  "data": { "a": 1 } }';
    webhooks.onUnknown((_event, context) => void seen.push(context.key));
    webhooks.onDuplicate((_event, context) => void seen.push(context.key));
    await (await webhooks.handle(request(text))).done;
    await (await webhooks.handle(request(text))).done;
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
  });
});

describe('in-flight errands', () => {
  it('an errand whose reporting throws (a throwing logger) still ends, and close() does not wait for it', async () => {
    const webhooks = createWebhooks({
      auth,
      logger: {
        error: () => {
          throw new Error('logger broke');
        },
      },
    });
    webhooks.on('message_sent', () => {
      throw new Error('handler broke');
    });
    const response = await webhooks.handle(request(body));
    expect(response.status).toBe(200);
    await expect(response.done).resolves.toBeUndefined();
    // Had it not ended, close() would abandon it (and report through the throwing logger).
    expect(await webhooks.close({ timeoutMs: 50 })).toEqual({ drained: 0, abandoned: 0 });
  });

  it('an errand finishing in the middle of the list leaves the others to close()', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 0 });
    let n = 0;
    webhooks.on('message_sent', () => sleep(++n === 2 ? 1 : 300));
    await webhooks.handle(request(body));
    await webhooks.handle(request(messageSent('second')));
    await webhooks.handle(request(messageSent('third')));
    await sleep(30);
    expect(await webhooks.close({ timeoutMs: 20 })).toEqual({ drained: 0, abandoned: 2 });
    expect(errors.map((error) => error.code)).toEqual(['shutdown_abandoned', 'shutdown_abandoned']);
  });

  it('errands leaving from the middle, then from after it, are both gone from the list', async () => {
    const { webhooks } = receiver({ handlerTimeoutMs: 0 });
    let n = 0;
    const delays = [300, 1, 15];
    webhooks.on('message_sent', () => sleep(delays[n++] ?? 0));
    await webhooks.handle(request(body));
    await webhooks.handle(request(messageSent('second')));
    await webhooks.handle(request(messageSent('third')));
    await sleep(40);
    // Only the first is still running: close() sees it alone.
    expect(await webhooks.close({ timeoutMs: 20 })).toEqual({ drained: 0, abandoned: 1 });
  });

  it('the first and the last errand finishing early leave the middle one', async () => {
    const { webhooks } = receiver({ handlerTimeoutMs: 0 });
    let n = 0;
    webhooks.on('message_sent', () => sleep(++n === 2 ? 300 : 1));
    await webhooks.handle(request(body));
    await webhooks.handle(request(messageSent('second')));
    await webhooks.handle(request(messageSent('third')));
    await sleep(30);
    // A fourth after the others ended: the list must take new errands after emptying at both ends.
    await webhooks.handle(request(messageSent('fourth')));
    expect(await webhooks.close({ timeoutMs: 100 })).toEqual({ drained: 1, abandoned: 1 });
  });

  it('done read before the errand started settles once it ends, and several requests in one turn all run', async () => {
    const { webhooks } = receiver();
    const ran: number[] = [];
    let n = 0;
    webhooks.on('message_sent', () => void ran.push(++n));
    const responses = await Promise.all([0, 1, 2].map((i) => webhooks.handle(request(messageSent(`in-one-turn-${i}`)))));
    await Promise.all(responses.map((response) => response.done));
    expect(ran).toEqual([1, 2, 3]);
  });
});
