/**
 * What `done`, receive() and close() wait for, and how handler failures are reported: the timing and
 * reporting rules of src/dispatch/dispatcher.ts that the status-table suites do not observe (found by mutation
 * testing, tools/mutation/results.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, WebhookError } from '../../src/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { Dispatcher, NO_FAILURES } from '../../src/dispatch/dispatcher.js';
import { auth, fixture, messageSent, receiver, sleep } from './support.js';

const request = (body: string) => buildRequest(body, { auth });

describe('done', () => {
  it('settles only after an asynchronous handler has finished', async () => {
    const { webhooks } = receiver();
    const finished: string[] = [];
    webhooks.on('message_sent', async () => {
      await sleep(20);
      finished.push('slow');
    });
    const response = await webhooks.handle(request(fixture('message_sent')));
    await response.done;
    expect(finished).toEqual(['slow']);
  });

  it('settles only after an asynchronous onError has finished with a handler failure', async () => {
    const webhooks = createWebhooks({ auth, logger: {} });
    const reported: string[] = [];
    webhooks.onError(async (error) => {
      await sleep(20);
      reported.push(error.code);
    });
    webhooks.on('message_sent', () => {
      throw new Error('boom');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(reported).toEqual(['handler_failed']);
  });

  it('waits for an onError that a late failure adds while another handler still runs', async () => {
    const webhooks = createWebhooks({ auth, logger: {} });
    const reported: string[] = [];
    webhooks.onError(async (error) => {
      await sleep(30);
      reported.push(error.code);
    });
    webhooks.on('message_sent', async () => {
      await sleep(1);
    });
    webhooks.on('message_sent', async () => {
      await sleep(10);
      throw new Error('late');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(reported).toEqual(['handler_failed']);
  });

  it('read after the handlers finished is already settled', async () => {
    const { webhooks } = receiver();
    const ran = vi.fn();
    webhooks.on('message_sent', ran);
    const response = await webhooks.handle(request(fixture('message_sent')));
    await sleep(5);
    expect(ran).toHaveBeenCalledTimes(1);
    let settled = false;
    void response.done.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it('receive() reports an asynchronous failure in its outcome', async () => {
    const { webhooks } = receiver();
    webhooks.on('message_sent', async () => {
      await sleep(5);
      throw new Error('later');
    });
    const outcome = await webhooks.receive(createTestEvent('message_sent'));
    expect(outcome.ok).toBe(false);
    expect(outcome.failures.map((failure) => failure.code)).toEqual(['handler_failed']);
  });
});

describe('Dispatcher.dispatch', () => {
  const event = createTestEvent('message_sent');

  it('answers synchronously, with no promise, when every handler is synchronous and succeeds', () => {
    const dispatcher = new Dispatcher({ handlerTimeoutMs: 1000, logger: {} });
    const ran = vi.fn();
    dispatcher.onTriggers('message_sent', ran);
    expect(dispatcher.dispatch(event, true)).toBe(NO_FAILURES);
    expect(ran).toHaveBeenCalledTimes(1);
  });

  it('gives the synchronous failures at once when nobody reports asynchronously', () => {
    const dispatcher = new Dispatcher({ handlerTimeoutMs: 1000, logger: {} });
    dispatcher.onTriggers('message_sent', () => {
      throw new Error('sync');
    });
    const outcome = dispatcher.dispatch(event, true, undefined, undefined, undefined, false);
    expect(Array.isArray(outcome)).toBe(true);
    expect((outcome as readonly WebhookError[]).map((failure) => failure.code)).toEqual(['handler_failed']);
  });
});

describe('Dispatcher.report and a bare logger', () => {
  const event = createTestEvent('message_sent');
  const failure = () => new WebhookError('handler_failed', 'x', { event });

  it('returns no promise when every error handler is synchronous, and a failing dispatch stays synchronous', () => {
    const dispatcher = new Dispatcher({ handlerTimeoutMs: 1000, logger: {} });
    const seen: string[] = [];
    dispatcher.onError((error) => void seen.push(error.code));
    expect(dispatcher.report(failure())).toBeUndefined();
    dispatcher.onTriggers('message_sent', () => {
      throw new Error('sync');
    });
    const outcome = dispatcher.dispatch(event, true);
    expect(Array.isArray(outcome)).toBe(true);
    expect(seen).toEqual(['handler_failed', 'handler_failed']);
  });

  it('returns a promise once an error handler is asynchronous, settled after it', async () => {
    const dispatcher = new Dispatcher({ handlerTimeoutMs: 1000, logger: {} });
    let done = false;
    dispatcher.onError(async () => {
      await sleep(5);
      done = true;
    });
    const reporting = dispatcher.report(failure());
    expect(reporting).toBeInstanceOf(Promise);
    await reporting;
    expect(done).toBe(true);
  });

  it('a logger with no methods at all is tolerated: no error handler, a failing one, an unknown trigger', async () => {
    const dispatcher = new Dispatcher({ handlerTimeoutMs: 1000, logger: {} });
    expect(dispatcher.report(failure())).toBeUndefined();
    dispatcher.onError(() => {
      throw new Error('onError broke');
    });
    expect(() => dispatcher.report(failure())).not.toThrow();
    expect(() => dispatcher.dispatch({ trigger: 'poll_voted', data: {} } as never, false)).not.toThrow();
  });
});

describe('handler timeout', () => {
  it('reports a handler that rejects after its timeout once, as handler_timeout', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 10 });
    webhooks.on('message_sent', async () => {
      await sleep(40);
      throw new Error('too late');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await sleep(60);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('hands onError the event, the raw body and the key with handler_timeout', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 10 });
    const body = fixture('message_sent');
    let key: string | undefined;
    webhooks.on('message_sent', (_event, context) => {
      key = context.key;
      return new Promise(() => undefined);
    });
    await (await webhooks.handle(request(body))).done;
    expect(errors).toHaveLength(1);
    const error = errors[0]!;
    expect(error.code).toBe('handler_timeout');
    expect(error.message).toContain('10 ms');
    expect(error.event).toMatchObject({ trigger: 'message_sent' });
    expect(error.rawBody).toBe(body);
    expect(error.key).toBe(key);
    expect(typeof key).toBe('string');
  });

  it('hands onError the cause, the event and the raw body with handler_failed', async () => {
    const { webhooks, errors } = receiver();
    const body = fixture('message_sent');
    const cause = new Error('nope');
    webhooks.on('message_sent', async () => {
      throw cause;
    });
    await (await webhooks.handle(request(body))).done;
    expect(errors).toHaveLength(1);
    expect(errors[0]!).toMatchObject({ code: 'handler_failed', cause, rawBody: body, event: { trigger: 'message_sent' } });
    expect(errors[0]!.message).toContain('nope');
  });

  it('a handler resolving after its timeout is reported once and leaves nothing behind', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 10 });
    // The handler resolves only once its timeout was reported (not after a fixed sleep: a busy machine can run
    // both timers in one turn), and a while later nothing more has been reported.
    let resolve: () => void = () => undefined;
    webhooks.on('message_sent', () => new Promise<void>((settle) => (resolve = settle)));
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
    resolve();
    await sleep(20);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });
});

describe('handler timeouts where timers are plain numbers without unref (as on Deno and in browsers)', () => {
  it('a handler that overruns is reported, one that finishes in time is not', async () => {
    const realSetTimeout = globalThis.setTimeout;
    const timeouts = vi
      .spyOn(globalThis, 'setTimeout')
      .mockImplementation(((...args: Parameters<typeof setTimeout>) => Number(realSetTimeout(...args))) as unknown as typeof setTimeout);
    try {
      const { webhooks, errors } = receiver({ handlerTimeoutMs: 10 });
      let late = true;
      webhooks.on('message_sent', () => (late ? new Promise(() => undefined) : Promise.resolve()));
      await (await webhooks.handle(request(messageSent(1)))).done;
      late = false;
      await (await webhooks.handle(request(messageSent(2)))).done;
      expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
      expect(timeouts.mock.results.every((result) => typeof result.value === 'number')).toBe(true);
    } finally {
      timeouts.mockRestore();
    }
  });
});

describe('a trigger nobody handles', () => {
  const unknownBody = JSON.stringify({ trigger: 'poll_voted', data: { id: 1 } });

  it('is logged as a warning when no onUnknown or onAny handler is registered', async () => {
    const warn = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { warn } });
    const response = await webhooks.handle(request(unknownBody));
    expect(response.status).toBe(200);
    await response.done;
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toEqual({ trigger: 'poll_voted' });
    expect(warn.mock.calls[0]![1]).toMatch(/onUnknown/);
  });

  it('is not warned about when onAny takes it, nor is a known trigger without handlers', async () => {
    const warn = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { warn } });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    const any = vi.fn();
    webhooks.onAny(any);
    await (await webhooks.handle(request(unknownBody))).done;
    expect(any).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('goes to onUnknown and not to a known trigger handler', async () => {
    const { webhooks } = receiver();
    const unknown = vi.fn();
    const known = vi.fn();
    webhooks.onUnknown(unknown).on('message_sent', known);
    await (await webhooks.handle(request(unknownBody))).done;
    expect(unknown).toHaveBeenCalledTimes(1);
    expect(known).not.toHaveBeenCalled();
  });
});

describe('on() and off() arguments', () => {
  it('on() refuses a trigger that is not a string, alone or in a list, naming what it got', () => {
    const { webhooks } = receiver();
    const handler = () => undefined;
    expect(() => webhooks.on(42 as never, handler)).toThrow(ConfigurationError);
    expect(() => webhooks.on(42 as never, handler)).toThrow(/got number/);
    expect(() => webhooks.on(['message_sent', null] as never, handler)).toThrow(/got null/);
    expect(() => webhooks.on({ trigger: 'message_sent' } as never, handler)).toThrow(/got object/);
  });

  it('on() registers nothing when one name of a list is wrong', async () => {
    const { webhooks } = receiver();
    const handler = vi.fn();
    expect(() => webhooks.on(['message_sent', 'poll_voted'] as never, handler)).toThrow(/Unknown trigger "poll_voted"/);
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(handler).not.toHaveBeenCalled();
  });

  it('on() with a list registers the handler for each trigger', async () => {
    const { webhooks } = receiver();
    const seen: string[] = [];
    webhooks.on(['message_sent', 'message_read_receipt'], (event) => void seen.push(event.trigger));
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await (await webhooks.handle(request(fixture('message_read_receipt')))).done;
    expect(seen).toEqual(['message_sent', 'message_read_receipt']);
  });

  it('the ConfigurationError names the argument at fault', () => {
    const { webhooks } = receiver();
    const option = (call: () => unknown) => {
      try {
        call();
      } catch (error) {
        return (error as ConfigurationError).option;
      }
      return 'accepted';
    };
    expect(option(() => webhooks.on(42 as never, () => undefined))).toBe('trigger');
    expect(option(() => webhooks.on('poll_voted' as never, () => undefined))).toBe('trigger');
    expect(option(() => webhooks.on('message_sent', 42 as never))).toBe('handler');
    expect(option(() => webhooks.onAny(42 as never))).toBe('handler');
  });

  it('a handler that is not a function is refused, naming the call', () => {
    const { webhooks } = receiver();
    expect(() => webhooks.on('message_sent', 'nope' as never)).toThrow('on("message_sent", handler) needs a function as its handler, got "nope".');
    expect(() => webhooks.on(['message_sent', 'message_read_receipt'], undefined as never)).toThrow(
      'on(["message_sent","message_read_receipt"], handler) needs a function',
    );
    expect(() => webhooks.onAny(5 as never)).toThrow('onAny needs a function as its handler, got number.');
    expect(() => webhooks.onUnknown(null as never)).toThrow(/onUnknown needs a function.*got null/);
    expect(() => webhooks.onError({} as never)).toThrow(/onError needs a function/);
  });

  it('off() takes a list of triggers', async () => {
    const { webhooks } = receiver();
    const handler = vi.fn();
    const other = vi.fn();
    webhooks.on(['message_sent', 'message_read_receipt'], handler).on('message_sent', other);
    webhooks.off(['message_sent', 'message_read_receipt'], handler);
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await (await webhooks.handle(request(fixture('message_read_receipt')))).done;
    expect(handler).not.toHaveBeenCalled();
    expect(other).toHaveBeenCalledTimes(1);
  });

  it('off(handler) removes an onAny, onUnknown or onError handler', async () => {
    const warn = vi.fn();
    const error = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { warn, error } });
    const any = vi.fn();
    const unknown = vi.fn();
    const onError = vi.fn();
    webhooks.onAny(any).onUnknown(unknown).onError(onError);
    webhooks.off(any).off(unknown).off(onError);
    webhooks.on('message_sent', () => {
      throw new Error('x');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    await (await webhooks.handle(request(JSON.stringify({ trigger: 'poll_voted', data: {} })))).done;
    expect(any).not.toHaveBeenCalled();
    expect(unknown).not.toHaveBeenCalled();
    expect(onError).not.toHaveBeenCalled();
    // With no onError left, the failure goes to the logger.
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]![0]).toMatchObject({ code: 'handler_failed', trigger: 'message_sent' });
    expect(error.mock.calls[0]![1]).toMatch(/register webhooks.onError/);
  });
});

describe('onError handlers that fail', () => {
  it('are logged with the failure they were handling, and the others still run', async () => {
    const error = vi.fn();
    const webhooks = createWebhooks({ auth, logger: { error } });
    const second = vi.fn();
    webhooks.onError(() => {
      throw new Error('sync onError');
    });
    webhooks.onError(async () => {
      throw new Error('async onError');
    });
    webhooks.onError(second);
    webhooks.on('message_sent', () => {
      throw new Error('x');
    });
    await (await webhooks.handle(request(fixture('message_sent')))).done;
    expect(second).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledTimes(2);
    for (const [fields, message] of error.mock.calls) {
      expect(fields).toMatchObject({ code: 'handler_failed', trigger: 'message_sent' });
      expect(message).toBe('An onError handler itself failed.');
    }
    expect(error.mock.calls.map(([fields]) => fields.reason).sort()).toEqual([
      expect.stringContaining('async onError'),
      expect.stringContaining('sync onError'),
    ]);
  });

  it('a logger without error() or warn() is tolerated', async () => {
    const webhooks = createWebhooks({ auth, logger: {} });
    webhooks.on('message_sent', () => {
      throw new Error('x');
    });
    const response = await webhooks.handle(request(fixture('message_sent')));
    await expect(response.done).resolves.toBeUndefined();
    await expect((await webhooks.handle(request(JSON.stringify({ trigger: 'poll_voted', data: {} })))).done).resolves.toBeUndefined();
  });
});

describe('close() with errands finishing out of order', () => {
  it('drains every one when the later errand finishes first', async () => {
    const { webhooks, errors } = receiver();
    const finished: number[] = [];
    let n = 0;
    webhooks.on('message_sent', async () => {
      const mine = ++n;
      await sleep(mine === 1 ? 40 : 5);
      finished.push(mine);
    });
    await webhooks.handle(request(fixture('message_sent')));
    await webhooks.handle(request(messageSent('second')));
    await webhooks.handle(request(messageSent('third')));
    await sleep(1);
    const closed = await webhooks.close({ timeoutMs: 1000 });
    expect(finished).toEqual([2, 3, 1]);
    expect(closed).toEqual({ drained: 3, abandoned: 0 });
    expect(errors).toEqual([]);
  });

  it('abandons only the errands still running at the deadline, reporting each', async () => {
    const { webhooks, errors } = receiver({ handlerTimeoutMs: 0 });
    let n = 0;
    webhooks.on('message_sent', async () => {
      const mine = ++n;
      await sleep(mine === 2 ? 5 : 200);
    });
    await webhooks.handle(request(fixture('message_sent')));
    await webhooks.handle(request(messageSent('second')));
    await webhooks.handle(request(messageSent('third')));
    await sleep(1);
    const closed = await webhooks.close({ timeoutMs: 50 });
    expect(closed).toEqual({ drained: 1, abandoned: 2 });
    expect(errors.map((error) => error.code)).toEqual(['shutdown_abandoned', 'shutdown_abandoned']);
    expect(errors[0]!.event).toMatchObject({ trigger: 'message_sent' });
    expect(errors[0]!.message).toContain('"message_sent"');
  });

  it('new deliveries after close() are refused with 503 and Retry-After', async () => {
    const { webhooks } = receiver();
    await webhooks.close({ timeoutMs: 10 });
    const response = await webhooks.handle(request(fixture('message_sent')));
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.headers.connection).toBe('close');
  });
});
