/** Lambda edges: stage prefixes, base64 bodies at and past the limit, budgets, an onError that never settles. */
import { describe, expect, it, vi } from 'vitest';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { ConfigurationError } from '../../src/index.js';
import { albEvent, httpApiEvent, lambdaContext, restApiEvent } from './lambda-events.js';
import { AUTH, LIMIT, fixture, messageOfSize, recordingReceiver } from './status-table.js';

const json = { 'content-type': 'application/json', authorization: AUTH };
const delivery = { method: 'POST', headers: json, body: fixture('message_sent') };

describe('lambda: HTTP API stage prefix', () => {
  it('strips a named stage only as a whole first segment', async () => {
    const { webhooks, events } = recordingReceiver();
    const handler = lambdaHandler(webhooks, { path: '/webhooks' });
    const under = (rawPath: string, stage: string) => {
      const event = httpApiEvent(delivery, stage);
      return { ...event, rawPath, requestContext: { ...event.requestContext, stage } };
    };
    expect((await handler(under('/prod/webhooks', 'prod'), lambdaContext())).statusCode).toBe(200);
    expect((await handler(under('/production/webhooks', 'prod'), lambdaContext())).statusCode).toBe(404);
    expect((await handler(under('/prodwebhooks', 'prod'), lambdaContext())).statusCode).toBe(404);
    // The $default stage adds no prefix: a path that merely starts with it is not stripped.
    expect((await handler(under('/$default/webhooks', '$default'), lambdaContext())).statusCode).toBe(404);
    expect((await handler(under('/webhooks', '$default'), lambdaContext())).statusCode).toBe(200);
    expect(events).toHaveLength(1); // the second 200 is a repeat of the first delivery
  });
});

describe('lambda: base64 bodies', () => {
  it('takes a base64 body of exactly the limit and refuses one byte more', async () => {
    const { webhooks, events, errors } = recordingReceiver();
    const handler = lambdaHandler(webhooks);
    const exact = restApiEvent({ ...delivery, body: messageOfSize(LIMIT), base64: true, contentLength: false });
    expect((await handler(exact, lambdaContext())).statusCode).toBe(200);
    const over = restApiEvent({ ...delivery, body: messageOfSize(LIMIT + 1), base64: true, contentLength: false });
    expect((await handler(over, lambdaContext())).statusCode).toBe(413);
    expect(events).toHaveLength(1);
    expect(errors.map((error) => error.code)).toEqual(['payload_too_large']);
  });

  it('decodes no more of a huge base64 body than the limit needs', async () => {
    const { webhooks } = recordingReceiver();
    const huge = restApiEvent({ ...delivery, body: Buffer.alloc(16 * 1024 * 1024, 0x20), base64: true, contentLength: false });
    const decoded: number[] = [];
    const from = Buffer.from.bind(Buffer);
    const spy = vi.spyOn(Buffer, 'from').mockImplementation(((value: unknown, encoding?: BufferEncoding) => {
      if (typeof value === 'string' && encoding === 'base64') decoded.push(value.length);
      return from(value as string, encoding);
    }) as typeof Buffer.from);
    try {
      expect((await lambdaHandler(webhooks)(huge, lambdaContext())).statusCode).toBe(413);
    } finally {
      spy.mockRestore();
    }
    // Every 4 base64 characters carry 3 bytes: enough for one byte past the limit, not the 16 MiB (the
    // Authorization header's credentials are the other, short, base64 text decoded).
    expect(Math.max(...decoded)).toBe(Math.ceil((LIMIT + 1) / 3) * 4);
  });
});

describe('lambda: budgets', () => {
  it('refuses a time budget of Infinity, NaN or below zero', () => {
    const { webhooks } = recordingReceiver();
    for (const timeBudgetMs of [Infinity, Number.NaN, -5]) {
      expect(() => lambdaHandler(webhooks, { timeBudgetMs })).toThrow(/timeBudgetMs/);
    }
  });

  it('returns within the budget even when onError itself never settles', async () => {
    const { webhooks } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    webhooks.onError(() => new Promise(() => undefined));
    const started = Date.now();
    const result = await lambdaHandler(webhooks, { timeBudgetMs: 80 })(restApiEvent(delivery), lambdaContext());
    expect(result.statusCode).toBe(200);
    // The budget, then the adapter's grace for the receiver's own timeout: never the onError's forever.
    expect(Date.now() - started).toBeLessThan(400);
  });
});

describe('lambda: the handler around the translation', () => {
  it('answers a request to another path 404 in the event kind’s own shape', async () => {
    const handler = lambdaHandler(recordingReceiver().webhooks, { path: '/webhooks' });
    expect(await handler(restApiEvent({ ...delivery, path: '/elsewhere' }), lambdaContext())).toEqual({
      statusCode: 404,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Not found.',
      isBase64Encoded: false,
    });
  });

  it('says what a bad time budget must be, in a ConfigurationError naming the option', () => {
    const thrown = (() => {
      try {
        lambdaHandler(recordingReceiver().webhooks, { timeBudgetMs: -1 });
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect(thrown).toMatchObject({ option: 'timeBudgetMs', message: expect.stringMatching(/positive number of milliseconds/) });
  });

  it('runs without a context, or with one lacking getRemainingTimeInMillis, and still waits for the handlers', async () => {
    for (const context of [undefined, {}]) {
      const { webhooks, errors } = recordingReceiver();
      let finished = false;
      webhooks.on('message_sent', async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        finished = true;
      });
      const result = await lambdaHandler(webhooks)(restApiEvent(delivery), context);
      expect(result.statusCode).toBe(200);
      expect(finished).toBe(true);
      expect(errors).toEqual([]);
    }
  });

  it('keeps to the time budget without a context (no remaining time to shrink it)', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise(() => undefined));
    const started = Date.now();
    const result = await lambdaHandler(webhooks, { timeBudgetMs: 80 })(restApiEvent(delivery));
    expect(result.statusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
  });

  it('leaves no timer behind once it has answered (a referenced one would hold the event loop open)', async () => {
    const { webhooks } = recordingReceiver();
    const handler = lambdaHandler(webhooks, { timeBudgetMs: 60_000 });
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timers();
    expect((await handler(restApiEvent(delivery), lambdaContext())).statusCode).toBe(200);
    expect(timers()).toBe(before);
  });

  it('answers invocations that overlap each at its own time, holding the event loop only while one waits', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', (event) => {
      const id = (event.data as { message: { id: string } }).message.id;
      return id.startsWith('slow') ? new Promise(() => undefined) : new Promise((resolve) => setTimeout(resolve, 10));
    });
    const withId = (id: string) => {
      const event = JSON.parse(fixture('message_sent'));
      event.data.message.id = id;
      return restApiEvent({ ...delivery, body: JSON.stringify(event) });
    };
    // Whatever timer the handler keeps to check deadlines: it must be referenced exactly while one waits.
    // (`_destroyed` is how node marks a timer that fired or was cleared.)
    const timers: NodeJS.Timeout[] = [];
    const holdsTheLoop = (timer: NodeJS.Timeout) => timer.hasRef() && (timer as unknown as { _destroyed?: boolean })._destroyed !== true;
    const realSetInterval = globalThis.setInterval;
    const realSetTimeout = globalThis.setTimeout;
    const keep = <T extends NodeJS.Timeout>(timer: T) => (timers.push(timer), timer);
    const intervalsCreated: NodeJS.Timeout[] = [];
    const intervals = vi.spyOn(globalThis, 'setInterval').mockImplementation(((...args: Parameters<typeof setInterval>) => {
      const timer = keep(realSetInterval(...args));
      intervalsCreated.push(timer);
      return timer;
    }) as typeof setInterval);
    const timeouts = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((...args: Parameters<typeof setTimeout>) => keep(realSetTimeout(...args))) as typeof setTimeout);
    let handler: ReturnType<typeof lambdaHandler>;
    try {
      handler = lambdaHandler(webhooks, { timeBudgetMs: 150 });
      const started = Date.now();
      const slow = handler(withId('slow'), lambdaContext());
      const fast = await handler(withId('fast'), lambdaContext());
      expect(fast.statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(120);
      // The slow invocation still waits: something referenced must keep the process alive to its deadline.
      expect(timers.some(holdsTheLoop)).toBe(true);
      expect((await slow).statusCode).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(145);
      expect(errors.map((error) => error.code)).toEqual(['handler_timeout']);
      // None waits any more: nothing of the adapter's holds the event loop open.
      expect(timers.filter(holdsTheLoop)).toEqual([]);
      // A new invocation straight away (before any cleanup could run) holds it again until its own deadline.
      const again = handler(withId('slow-2'), lambdaContext());
      expect(timers.some(holdsTheLoop)).toBe(true);
      expect((await again).statusCode).toBe(200);
      // And once none has waited for a while, no timer of the adapter is left running, held or not.
      await new Promise((resolve) => realSetTimeout(resolve, 100));
      expect(intervalsCreated.filter((timer) => (timer as unknown as { _destroyed?: boolean })._destroyed !== true)).toEqual([]);
    } finally {
      intervals.mockRestore();
      timeouts.mockRestore();
    }
  });

  it('answers at its deadline to the millisecond, not a tick later (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const { webhooks } = recordingReceiver();
      webhooks.on('message_sent', () => {
        throw new Error('handler failed');
      });
      // onError never settles, so only the adapter's deadline (budget + 100 ms grace = 200 ms) answers.
      webhooks.onError(() => new Promise(() => undefined));
      let answered = false;
      const result = lambdaHandler(webhooks, { timeBudgetMs: 100 })(restApiEvent(delivery), lambdaContext()).then((answer) => {
        answered = true;
        return answer;
      });
      await vi.advanceTimersByTimeAsync(199);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(answered).toBe(true);
      expect((await result).statusCode).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects the invocation when building the result fails, instead of leaving it pending', async () => {
    const { webhooks } = recordingReceiver();
    let release: (() => void) | undefined;
    webhooks.on('message_sent', () => new Promise<void>((resolve) => (release = resolve)));
    const event = albEvent(delivery, true);
    const invocation = lambdaHandler(webhooks)(event, lambdaContext());
    // The ALB result is built from the event once the handlers finished: make that read fail.
    Object.defineProperty(event, 'multiValueHeaders', {
      get() {
        throw new Error('unreadable event');
      },
    });
    await vi.waitFor(() => expect(release).toBeDefined());
    release?.();
    await expect(invocation).rejects.toThrow('unreadable event');
  });

  it('runs where timers are plain numbers without ref/unref (as on Deno)', async () => {
    const { webhooks, errors } = recordingReceiver();
    webhooks.on('message_sent', () => new Promise((resolve) => setTimeout(resolve, 20)));
    const realSetInterval = globalThis.setInterval;
    // Node clears a timer by its numeric id too, so the interval still stops.
    const intervals = vi
      .spyOn(globalThis, 'setInterval')
      .mockImplementation(((...args: Parameters<typeof setInterval>) => Number(realSetInterval(...args))) as unknown as typeof setInterval);
    try {
      const handler = lambdaHandler(webhooks, { timeBudgetMs: 500 });
      // Two at once: the second finds the interval running (and would ref it), each leaving would unref it.
      const results = await Promise.all([handler(restApiEvent(delivery), lambdaContext()), handler(restApiEvent(delivery), lambdaContext())]);
      expect(results.map((result) => result.statusCode)).toEqual([200, 200]);
      expect(intervals).toHaveBeenCalledTimes(1);
      expect(errors).toEqual([]);
    } finally {
      intervals.mockRestore();
    }
  });
});
