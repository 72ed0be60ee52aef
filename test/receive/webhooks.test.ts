import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, triggers, WebhookError, type HandlerContext, type ParsedWebhook } from '../../src/index.js';
import { basicAuthHeader, buildRequest, createTestEvent } from '../../src/testing/index.js';
import { auth, fixture, receiver } from './support.js';

const request = (body: string, headers: Record<string, string> = {}) =>
  buildRequest(body, { auth, headers });

describe('handle: the status table', () => {
  it('405 with Allow: POST for other methods', async () => {
    const { webhooks } = receiver();
    const response = await webhooks.handle({ method: 'PUT', headers: {}, body: fixture('message_sent') });
    expect(response).toMatchObject({ status: 405, headers: { allow: 'POST' } });
  });

  it('413 from Content-Length before reading the body, and from the body itself', async () => {
    const { webhooks, errors } = receiver({ maxBodyBytes: 100 });
    const reader = vi.fn(async () => 'never read');
    const announced = await webhooks.handle({ method: 'POST', headers: { 'content-length': '1000000000' }, body: reader });
    expect(announced.status).toBe(413);
    expect(announced.headers.connection).toBe('close');
    expect(reader).not.toHaveBeenCalled();
    const actual = await webhooks.handle(request('x'.repeat(101)));
    expect(actual.status).toBe(413);
    await actual.done;
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large', 'payload_too_large']);
  });

  it('counts the limit in UTF-8 bytes, not characters', async () => {
    const { webhooks } = receiver({ maxBodyBytes: 100 });
    const body = `{"trigger":"x","data":{"t":"${'é'.repeat(40)}"}}`;
    expect(body.length).toBeLessThan(100);
    expect((await webhooks.handle({ method: 'POST', headers: { authorization: basicAuthHeader('platform', 's3cret') }, body })).status).toBe(413);
  });

  it('415 for a non-JSON content type; JSON in any letter case and +json pass', async () => {
    const { webhooks } = receiver();
    expect((await webhooks.handle(request(fixture('message_sent'), { 'content-type': 'text/plain' }))).status).toBe(415);
    for (const type of ['Application/JSON; charset=utf-8', 'application/vnd.chat+json']) {
      expect((await webhooks.handle(request(fixture('message_sent'), { 'content-type': type }))).status).toBe(200);
    }
    const noType = request(fixture('message_sent'));
    delete (noType.headers as Record<string, string>)['content-type'];
    expect((await webhooks.handle(noType)).status).toBe(200);
  });

  it('401 with WWW-Authenticate before reading the body, and onError(unauthorized)', async () => {
    const { webhooks, errors } = receiver();
    const reader = vi.fn(async () => fixture('message_sent'));
    const response = await webhooks.handle({ method: 'POST', headers: { authorization: basicAuthHeader('platform', 'nope') }, body: reader });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Basic realm="webhooks"');
    expect(reader).not.toHaveBeenCalled();
    await response.done;
    expect(errors[0]?.code).toBe('unauthorized');
    expect(errors[0]?.rawBody).toBeUndefined();
  });

  it('401 for a repeated Authorization header even if one copy is right', async () => {
    const { webhooks } = receiver();
    const good = basicAuthHeader('platform', 's3cret');
    const response = await webhooks.handle({ method: 'POST', headers: { authorization: [good, good] }, body: fixture('message_sent') });
    expect(response.status).toBe(401);
  });

  it('reads headers from a fetch Headers object and from mixed-case names', async () => {
    const { webhooks } = receiver();
    const headers = new Headers({ Authorization: basicAuthHeader('platform', 's3cret'), 'Content-Type': 'application/json' });
    expect((await webhooks.handle({ method: 'POST', headers, body: fixture('message_sent') })).status).toBe(200);
    const mixed = { Authorization: basicAuthHeader('platform', 's3cret'), 'Content-Type': 'text/html' };
    expect((await webhooks.handle({ method: 'POST', headers: mixed, body: fixture('message_sent') })).status).toBe(415);
  });

  it('400 for invalid JSON and for a non-envelope, with the raw body in onError', async () => {
    const { webhooks, errors } = receiver();
    const first = await webhooks.handle(request('{"trigger":'));
    const second = await webhooks.handle(request('[1,2]'));
    expect([first.status, second.status]).toEqual([400, 400]);
    await Promise.all([first.done, second.done]);
    expect(errors.map((error) => [error.code, error.rawBody])).toEqual([
      ['invalid_json', '{"trigger":'],
      ['invalid_envelope', '[1,2]'],
    ]);
    expect(first.body).not.toMatch(/at .*\.ts/);
  });

  it("invalid payload: 200 by default, 400 with invalidPayload: 'reject', onError either way and no handler", async () => {
    for (const [mode, status] of [['accept', 200], ['reject', 400]] as const) {
      const { webhooks, errors } = receiver({ invalidPayload: mode });
      const handler = vi.fn();
      webhooks.on('message_sent', handler).onAny(handler);
      const body = '{"trigger":"message_sent","data":{"message":{"id":"1"}}}';
      const response = await webhooks.handle(request(body));
      expect(response.status).toBe(status);
      await response.done;
      expect(handler).not.toHaveBeenCalled();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'invalid_payload', rawBody: body });
      expect(errors[0]?.issues?.length).toBeGreaterThan(0);
    }
  });

  it('200 for an unknown trigger, handed to onUnknown and onAny', async () => {
    const { webhooks } = receiver();
    const unknown = vi.fn();
    const any = vi.fn();
    const typed = vi.fn();
    webhooks.onUnknown(unknown).onAny(any).on('message_sent', typed);
    const response = await webhooks.handle(request('{"trigger":"poll_voted","data":{"id":"1"}}'));
    expect(response.status).toBe(200);
    await response.done;
    expect(unknown).toHaveBeenCalledWith(
      expect.objectContaining({ trigger: 'poll_voted' }),
      expect.objectContaining({ attempt: 1, receivedAt: expect.any(Number) }),
    );
    expect(unknown.mock.calls[0]?.[1].key).toMatch(/^::poll_voted:#/);
    expect(any).toHaveBeenCalledTimes(1);
    expect(typed).not.toHaveBeenCalled();
  });

  it('200 OK before the handlers run', async () => {
    const { webhooks } = receiver();
    const order: string[] = [];
    webhooks.on('message_sent', () => void order.push('handler'));
    const response = await webhooks.handle(request(fixture('message_sent')));
    order.push('response');
    expect(response).toMatchObject({ status: 200, body: 'OK' });
    await response.done;
    expect(order).toEqual(['response', 'handler']);
  });
});

describe('dispatch', () => {
  it.each(triggers)('dispatches fixtures/%s.json to its typed handler', async (trigger) => {
    const { webhooks, errors } = receiver();
    const received: ParsedWebhook[] = [];
    webhooks.on(trigger, (event) => void received.push(event));
    const response = await webhooks.handle(request(fixture(trigger)));
    expect(response.status).toBe(200);
    await response.done;
    expect(errors).toEqual([]);
    expect(received.map((event) => event.trigger)).toEqual([trigger]);
  });

  it('registers one handler for several triggers', async () => {
    const { webhooks } = receiver();
    const seen: string[] = [];
    webhooks.on(['group_member_joined', 'group_member_left'], (event) => void seen.push(event.data.group.guid));
    await (await webhooks.handle(request(fixture('group_member_joined')))).done;
    await (await webhooks.handle(request(fixture('group_member_left')))).done;
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(seen).toHaveLength(2);
  });

  it('isolates handlers: a throwing and a rejecting one do not stop the others; both reach onError with event and raw body', async () => {
    const { webhooks, errors } = receiver();
    const survivor = vi.fn();
    webhooks
      .on('message_sent', () => {
        throw new Error('sync boom');
      })
      .on('message_sent', async () => {
        throw new Error('async boom');
      })
      .on('message_sent', survivor);
    const body = fixture('message_sent');
    await (await webhooks.handle(request(body))).done;
    expect(survivor).toHaveBeenCalledTimes(1);
    expect(errors.map((error) => error.code)).toEqual(['handler_failed', 'handler_failed']);
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringContaining('sync boom'),
      expect.stringContaining('async boom'),
    ]);
    for (const error of errors) {
      expect(error.rawBody).toBe(body);
      expect((error.event as ParsedWebhook).trigger).toBe('message_sent');
    }
  });

  it('waits for async handlers in done, and reports one that overruns handlerTimeoutMs', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 30 });
    let finished = false;
    webhooks.on('message_sent', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      finished = true;
    });
    webhooks.on('message_sent', () => new Promise(() => {}));
    const response = await webhooks.handle(request(fixture('message_sent')));
    await response.done;
    expect(finished).toBe(true);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('survives an onError handler that throws or rejects, and still calls the others', async () => {
    const logged: unknown[] = [];
    const webhooks = createWebhooks({ auth, logger: { error: (fields) => void logged.push(fields) } });
    const second = vi.fn();
    webhooks
      .onError(() => {
        throw new Error('bad onError');
      })
      .onError(async () => {
        throw new Error('bad async onError');
      })
      .onError(second);
    webhooks.on('message_sent', () => {
      throw new Error('handler');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(second).toHaveBeenCalledTimes(1);
    expect(logged).toHaveLength(2);
    expect((await webhooks.handle(request(fixture('message_read_receipt')))).status).toBe(200);
  });

  it('logs failures when no onError is registered, without message bodies or credentials', async () => {
    const lines: string[] = [];
    const log = (fields: object, message?: string) => void lines.push(JSON.stringify(fields) + (message ?? ''));
    const webhooks = createWebhooks({ auth, logger: { error: log, warn: log, debug: log, info: log } });
    webhooks.on('message_sent', () => {
      throw new Error('x');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await (await webhooks.handle(buildRequest(fixture('message_sent'), { auth: { ...auth, password: 'wrong' } }))).done;
    expect(lines.join('\n')).toContain('handler');
    expect(lines.join('\n')).not.toContain('Suit is ready');
    expect(lines.join('\n')).not.toContain('wrong');
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  it('off removes a handler from one trigger or from everywhere', async () => {
    const { webhooks } = receiver();
    const handler = vi.fn();
    webhooks.on('message_sent', handler).onAny(handler);
    webhooks.off('message_sent', handler);
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(handler).toHaveBeenCalledTimes(1);
    webhooks.off(handler);
    await (await webhooks.handle(request(fixture('message_read_receipt')))).done;
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('on() refuses a trigger it does not know at run time too', () => {
    const { webhooks } = receiver();
    expect(() => webhooks.on('poll_voted' as never, () => {})).toThrow(/onUnknown/);
  });

  it('receive() dispatches an already-parsed event and settles after its handlers', async () => {
    const { webhooks } = receiver();
    const seen: string[] = [];
    webhooks.on('message_sent', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(event.data.message.id);
    });
    await webhooks.receive(createTestEvent('message_sent', { data: { message: { id: '77' } } }));
    expect(seen).toEqual(['77']);
  });
});

describe('receive(event, context): the context handlers get', () => {
  const event = () => createTestEvent('message_sent', { data: { message: { id: '88' } } });

  it('a first run by default: attempt 1, the documented key, received now', async () => {
    const { webhooks } = receiver();
    const contexts: HandlerContext[] = [];
    webhooks.on('message_sent', (_event, context) => void contexts.push({ ...context, key: context.key }));
    const before = Date.now();
    await webhooks.receive(event());
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ attempt: 1, key: expect.stringMatching(/:message_sent:88$/) });
    expect(contexts[0]!.receivedAt).toBeGreaterThanOrEqual(before);
    expect(contexts[0]!.receivedAt).toBeLessThanOrEqual(Date.now());
  });

  it('takes the key and arrival time given, still as a first run without an attempt', async () => {
    const { webhooks } = receiver();
    const contexts: HandlerContext[] = [];
    webhooks.on('message_sent', (_event, context) => void contexts.push({ ...context, key: context.key }));
    await webhooks.receive(event(), { key: 'given', receivedAt: 5 });
    await webhooks.receive(event(), { receivedAt: 7 });
    await webhooks.receive(event(), { attempt: 3, receivedAt: 9 });
    expect(contexts).toEqual([
      { attempt: 1, key: 'given', receivedAt: 5 },
      { attempt: 1, key: expect.stringMatching(/:message_sent:88$/), receivedAt: 7 },
      { attempt: 3, key: expect.stringMatching(/:message_sent:88$/), receivedAt: 9 },
    ]);
  });

  it('an event nobody handles, with a logger that throws on its warning, still resolves ok', async () => {
    const warn = vi.fn(() => {
      throw new Error('logger broke');
    });
    const webhooks = createWebhooks({ auth, logger: { warn } });
    const outcome = await webhooks.receive({ trigger: 'brand_new_trigger', data: {} } as unknown as ParsedWebhook);
    expect(warn).toHaveBeenCalled();
    expect(outcome).toEqual({ ok: true, failures: [] });
  });
});

describe('close() with a refusal still being reported', () => {
  it('abandons onError\'s report of a refused request by name, with no event', async () => {
    const { webhooks } = receiver();
    const seen: WebhookError[] = [];
    let release = () => {};
    webhooks.onError((error) => {
      seen.push(error);
      if (error.code === 'unauthorized') return new Promise<void>((resolve) => (release = resolve));
    });
    const refused = await webhooks.handle(buildRequest(fixture('message_sent'), { auth: { ...auth, password: 'wrong' } }));
    expect(refused.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await webhooks.close({ timeoutMs: 20 })).toEqual({ drained: 0, abandoned: 1 });
    release();
    expect(seen.map((error) => error.code)).toEqual(['unauthorized', 'shutdown_abandoned']);
    expect(seen[1]!.message).toBe('Shutdown did not wait for onError to finish with a refused request.');
    expect(seen[1]!.event).toBeUndefined();
  });
});

describe('duplicates', () => {
  it('answers a repeated delivery 200 without running the handlers again', async () => {
    const { webhooks } = receiver();
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    for (let i = 0; i < 3; i++) expect((await webhooks.handle(request(fixture('message_sent')))).status).toBe(200);
    const other = createTestEvent('message_sent', { data: { message: { id: '1422' } } });
    await (await webhooks.handle(request(JSON.stringify(other)))).done;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('never takes two pre-parsed bodies without stable text for repeats of each other', async () => {
    const { webhooks } = receiver();
    const seen: unknown[] = [];
    webhooks.onUnknown((event) => void seen.push(event.data.id));
    const tooDeep = (id: string) => {
      let nested: object = {};
      for (let i = 0; i < 20_000; i++) nested = { nested };
      return { trigger: 'poll_voted', data: { id, nested } };
    };
    for (const id of ['a', 'b']) {
      const response = await webhooks.handle({ method: 'POST', headers: { authorization: basicAuthHeader('platform', 's3cret') }, body: tooDeep(id) });
      expect(response.status).toBe(200);
      await response.done;
    }
    expect(seen).toEqual(['a', 'b']);
  });

  it('forgets a delivery after the window, and can be turned off', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { webhooks } = receiver({ dedupe: { windowMs: 1000 } });
      const handler = vi.fn();
      webhooks.on('message_sent', handler);
      await (await webhooks.handle(request(fixture('message_sent')))).done;
      vi.setSystemTime(Date.now() + 1001);
      await (await webhooks.handle(request(fixture('message_sent')))).done;
      expect(handler).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
    const { webhooks } = receiver({ dedupe: false });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(handler).toHaveBeenCalledTimes(2);
  });
});

describe('enqueue (serverless hand-off)', () => {
  it('hands accepted events to enqueue instead of the handlers, 503 when it fails', async () => {
    const { webhooks, errors } = receiver();
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    const enqueue = vi.fn(async (_event: ParsedWebhook) => {});
    const ok = await webhooks.handle(request(fixture('message_sent')), { enqueue });
    expect(ok.status).toBe(200);
    await ok.done;
    expect(enqueue).toHaveBeenCalledWith(expect.objectContaining({ trigger: 'message_sent' }));
    expect(handler).not.toHaveBeenCalled();
    const failing = await webhooks.handle(request(fixture('message_read_receipt')), {
      enqueue: async () => {
        throw new Error('queue down');
      },
    });
    expect(failing.status).toBe(503);
    await failing.done;
    expect(errors[0]?.code).toBe('enqueue_failed');
  });
});

describe('close', () => {
  it('stops taking requests with 503 + Retry-After and drains running handlers', async () => {
    const { webhooks } = receiver();
    let finished = false;
    webhooks.on('message_sent', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      finished = true;
    });
    await webhooks.handle(request(fixture('message_sent')));
    const result = await webhooks.close({ timeoutMs: 1000 });
    expect(finished).toBe(true);
    expect(result).toEqual({ drained: 1, abandoned: 0 });
    const after = await webhooks.handle(request(fixture('message_read_receipt')));
    expect(after.status).toBe(503);
    expect(after.headers['retry-after']).toBeDefined();
  });

  it('reports handlers it had to abandon at the deadline', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 0 });
    webhooks.on('message_sent', () => new Promise(() => {}));
    await webhooks.handle(request(fixture('message_sent')));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await webhooks.close({ timeoutMs: 20 });
    expect(result).toEqual({ drained: 0, abandoned: 1 });
    expect(errors.map((error) => error.code)).toEqual(['shutdown_abandoned']);
    expect((errors[0]?.event as ParsedWebhook).trigger).toBe('message_sent');
  });
});

describe('options', () => {
  it('rejects nonsensical options with clear messages', () => {
    expect(() => createWebhooks({ auth, maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => createWebhooks({ auth, invalidPayload: 'drop' as never })).toThrow(/invalidPayload/);
    expect(() => createWebhooks({ auth, handlerTimeoutMs: -5 })).toThrow(/handlerTimeoutMs/);
  });

  it('throws option mistakes as a ConfigurationError naming the option, not as a WebhookError', () => {
    for (const [options, option] of [
      [{ auth, maxBodyBytes: 0 }, 'maxBodyBytes'],
      [{ auth, invalidPayload: 'drop' }, 'invalidPayload'],
      [{ auth, handlerTimeoutMs: Number.NaN }, 'handlerTimeoutMs'],
      [{ auth: [] }, 'auth'],
      [null, 'options'],
    ] as const) {
      let thrown: unknown;
      try {
        createWebhooks(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigurationError);
      expect(thrown).not.toBeInstanceOf(WebhookError);
      expect(thrown).toMatchObject({ name: 'ConfigurationError', option });
    }
    expect(() => createWebhooks({ auth }).on('poll_voted' as never, () => {})).toThrow(ConfigurationError);
  });

  it('leaves failures after the 200 without an HTTP status, and gives refusals theirs', async () => {
    const { webhooks, errors } = receiver();
    webhooks.on('message_sent', () => {
      throw new Error('boom');
    });
    const accepted = await webhooks.handle(buildRequest(createTestEvent('message_sent'), { auth }));
    await accepted.done;
    const refused = await webhooks.handle(buildRequest('{', { auth }));
    await refused.done;
    expect(errors.map(({ code, status }) => [code, status])).toEqual([
      ['handler_failed', undefined],
      ['invalid_json', 400],
    ]);
  });
});

describe('respond: the callback form adapters use', () => {
  it('answers synchronously when the body is in memory, and runs handlers only once send has returned', async () => {
    const { webhooks } = receiver();
    const order: string[] = [];
    webhooks.on('message_sent', () => void order.push('handler'));
    const responses: number[] = [];
    webhooks.respond(request(fixture('message_sent')), (response) => {
      order.push('send');
      responses.push(response.status);
      order.push('sent');
    });
    expect(responses).toEqual([200]); // before any await
    // The adapter has written the response when send returns: the handlers start then, without a tick of their own.
    expect(order).toEqual(['send', 'sent', 'handler']);
  });

  it('still runs the handlers of an accepted event when send throws', async () => {
    const { webhooks } = receiver();
    const handled: string[] = [];
    webhooks.on('message_sent', (event) => void handled.push(event.data.message.id));
    expect(() =>
      webhooks.respond(request(fixture('message_sent')), () => {
        throw new Error('the socket is gone');
      }),
    ).toThrow('the socket is gone');
    expect(handled).toHaveLength(1);
  });

  it('handle() gives the response before the handlers run', async () => {
    const { webhooks } = receiver();
    const order: string[] = [];
    webhooks.on('message_sent', () => void order.push('handler'));
    const response = await webhooks.handle(request(fixture('message_sent')));
    order.push(`response ${response.status}`);
    await response.done;
    expect(order).toEqual(['response 200', 'handler']);
  });

  it('sends exactly once for a body reader, a failing reader and a throwing one', async () => {
    const { webhooks, errors } = receiver();
    const sent = (body: unknown) =>
      new Promise<number[]>((resolve) => {
        const statuses: number[] = [];
        webhooks.respond({ ...request(''), body } as never, (response) => {
          statuses.push(response.status);
          setTimeout(() => resolve(statuses), 20); // a second call would land in this time
        });
      });
    expect(await sent(async () => fixture('message_sent'))).toEqual([200]);
    expect(await sent(() => Promise.reject(new Error('socket reset')))).toEqual([400]);
    expect(
      await sent(() => {
        throw new Error('no stream');
      }),
    ).toEqual([400]);
    expect(errors.map((error) => error.code)).toEqual(['invalid_json', 'invalid_json']);
  });

  it('waits for enqueue before answering, and hands done to whoever asks', async () => {
    const { webhooks } = receiver();
    let queued!: () => void;
    const enqueue = () => new Promise<void>((resolve) => (queued = resolve));
    const statuses: number[] = [];
    webhooks.respond(request(fixture('message_sent')), (response) => void statuses.push(response.status), { enqueue });
    await new Promise((resolve) => setImmediate(resolve));
    expect(statuses).toEqual([]);
    queued();
    await new Promise((resolve) => setImmediate(resolve));
    expect(statuses).toEqual([200]);

    let finish!: () => void;
    webhooks.on('message_sent', () => new Promise<void>((resolve) => (finish = resolve)));
    const response = await webhooks.handle(request(fixture('message_sent').replace('"id"', '"id" ')));
    let settled = false;
    void response.done.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    await response.done;
    expect(settled).toBe(true);
  });
});
