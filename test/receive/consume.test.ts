/**
 * The worker loop (src/delivery/consume.ts) around the inbox: what it logs when the inbox fails it (a claim,
 * a lease renewal, the write after the handlers), its option checks and defaults, unknown triggers, and the
 * error an event whose handlers failed leaves behind. Memory inbox only: the stores have their own contract.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhooks, createWorker, memoryInbox, type Inbox, type InboxEntry, type WebhookError, type Worker } from '../../src/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FAST_RETRY = { attempts: 3, minDelayMs: 1, maxDelayMs: 5 };

function entry(key: string, name = 'message_sent'): InboxEntry {
  const rawBody = fixture(name);
  const event = JSON.parse(rawBody);
  return { key, trigger: event.trigger, event, rawBody, receivedAt: Date.now() };
}

/** A memory inbox with some methods replaced (the stores are classes: their methods do not survive a spread). */
function inboxWith(overrides: Partial<Inbox>, inner: Inbox = memoryInbox()): Inbox {
  const methods = ['put', 'claim', 'renew', 'complete', 'fail', 'stats', 'list', 'retry', 'purge', 'close'] as const;
  const inbox: Record<string, unknown> = { kind: inner.kind, durable: inner.durable };
  for (const name of methods) inbox[name] = overrides[name] ?? (inner[name] as (...args: unknown[]) => unknown).bind(inner);
  return inbox as unknown as Inbox;
}

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } };
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

const open: Worker[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((worker) => worker.close()));
});
function worker(options: Parameters<typeof createWorker>[0]): Worker {
  const created = createWorker(options);
  open.push(created);
  return created;
}

describe('the worker when the inbox fails it', () => {
  it('warns of a failed claim with the store and the reason, pauses up to a second, claims again and says it is back', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    const claims: number[] = [];
    const inbox = inboxWith(
      {
        claim: (options) => {
          claims.push(Date.now());
          if (claims.length === 1) return Promise.reject(new Error('connection refused'));
          return inner.claim(options);
        },
      },
      inner,
    );
    const { lines, logger } = recordingLogger();
    const ran: string[] = [];
    worker({ inbox, logger, concurrency: 1 })
      .on('message_sent', (_event, { key }) => void ran.push(key))
      .start();
    await until(() => ran.length === 1);
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: { inbox: 'memory', reason: 'connection refused' },
        message:
          'The memory inbox is not answering (connection refused): no event is claimed until it does. ' +
          'Claims are tried again with a growing pause; one line will say when it is back.',
      },
      {
        level: 'warn',
        fields: { inbox: 'memory', downMs: expect.any(Number), failedClaims: 1 },
        message: expect.stringMatching(/^The memory inbox answers again after \d+\.\d s \(1 failed claims\); the worker claims events again\.$/),
      },
    ]);
    expect(claims[1]! - claims[0]!).toBeGreaterThanOrEqual(450);
    expect(claims[1]! - claims[0]!).toBeLessThan(1500);
  });

  it('logs to the console without a logger, and through the receiver’s logger in a receiver', async () => {
    const failing = () => inboxWith({ claim: () => Promise.reject(new Error('down')) });
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const alone = createWorker({ inbox: failing(), concurrency: 1 }).start();
      await until(() => consoleWarn.mock.calls.length > 0);
      await alone.close();
      expect(String(consoleWarn.mock.calls[0]?.[0])).toContain('The memory inbox is not answering (down)');
    } finally {
      consoleWarn.mockRestore();
    }
    const { lines, logger } = recordingLogger();
    const webhooks = createWebhooks({ auth: { username: 'u', password: 'p' }, inbox: failing(), logger, worker: { concurrency: 1 } });
    try {
      await until(() => lines.length > 0);
      expect(lines[0]).toMatchObject({ level: 'warn', message: expect.stringContaining('The memory inbox is not answering (down)') });
    } finally {
      await webhooks.close();
    }
  });

  it('close() ends the pause after a failed claim at once', async () => {
    const inbox = inboxWith({ claim: () => Promise.reject(new Error('down')) });
    const created = createWorker({ inbox, logger: {}, concurrency: 1 }).start();
    await sleep(20);
    const started = Date.now();
    await created.close();
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('a claim that fails because close() aborted it is not logged', async () => {
    const inbox = inboxWith({
      claim: ({ signal }) =>
        new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
    });
    const { lines, logger } = recordingLogger();
    const created = createWorker({ inbox, logger, concurrency: 2 }).start();
    await sleep(20);
    await created.close();
    expect(lines).toEqual([]);
  });

  it('claims with the lease and a one-second wait, and renews the lease about three times per lease', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    const claims: Array<{ leaseMs: number; waitMs: number }> = [];
    const renewals: number[] = [];
    const inbox = inboxWith(
      {
        claim: (options) => (claims.push({ leaseMs: options.leaseMs, waitMs: options.waitMs }), inner.claim(options)),
        renew: (claim, leaseMs) => (renewals.push(leaseMs), inner.renew(claim, leaseMs)),
      },
      inner,
    );
    let done = false;
    worker({ inbox, logger: {}, leaseMs: 60, concurrency: 1 })
      .on('message_sent', async () => {
        await sleep(200);
        done = true;
      })
      .start();
    await until(() => done);
    expect(claims[0]).toEqual({ leaseMs: 60, waitMs: 1000 });
    // Every 20 ms (a third of the lease) for 200 ms: about ten, each for a whole lease.
    expect(renewals.length).toBeGreaterThanOrEqual(5);
    expect(renewals.length).toBeLessThanOrEqual(12);
    expect(new Set(renewals)).toEqual(new Set([60]));
  });

  it('renews no more often than every 5 ms however short the lease', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    let renewals = 0;
    const inbox = inboxWith({ renew: (claim, leaseMs) => (renewals++, inner.renew(claim, leaseMs)) }, inner);
    let done = false;
    let ms = 0;
    worker({ inbox, logger: {}, leaseMs: 10, concurrency: 1 })
      .on('message_sent', async () => {
        const started = performance.now();
        // At least 100 ms and five renewals (a busy machine runs timers late: it is given the time it takes).
        await sleep(100);
        await until(() => renewals >= 5);
        ms = performance.now() - started;
        done = true;
      })
      .start();
    await until(() => done);
    // A third of 10 ms would be 3 ms (about 33 renewals in 100 ms); 5 ms gives about 20: bounded by the time taken.
    expect(renewals).toBeGreaterThanOrEqual(5);
    expect(renewals).toBeLessThanOrEqual(Math.ceil(ms / 5) + 4);
  });

  it('warns once a renewal finds the lease lost, with the key; a renewal that fails is ignored', async () => {
    for (const [lost, renew] of [
      [true, () => Promise.resolve(false)],
      [false, () => Promise.reject(new Error('timeout'))],
    ] as const) {
      const inner = memoryInbox();
      await inner.put(entry('k1'));
      const { lines, logger } = recordingLogger();
      let done = false;
      worker({ inbox: inboxWith({ renew }, inner), logger, leaseMs: 30, concurrency: 1 })
        .on('message_sent', async () => {
          await sleep(60);
          done = true;
        })
        .start();
      await until(() => done);
      if (lost) {
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) {
          expect(line).toEqual({ level: 'warn', fields: { key: 'k1' }, message: 'Lost the lease of a running event: another worker may run it too.' });
        }
      } else {
        expect(lines).toEqual([]);
      }
    }
  });

  it('logs a write after the handlers that failed (complete or fail), and the event runs again later', async () => {
    const inner = memoryInbox();
    await inner.put(entry('ok'));
    await inner.put(entry('bad', 'message_read_receipt'));
    const { lines, logger } = recordingLogger();
    const inbox = inboxWith(
      { complete: () => Promise.reject(new Error('disk full')), fail: () => Promise.reject(new Error('disk full')) },
      inner,
    );
    const ran: string[] = [];
    worker({ inbox, logger, concurrency: 1, retry: FAST_RETRY })
      .on('message_sent', () => void ran.push('ok'))
      .on('message_read_receipt', () => {
        ran.push('bad');
        throw new Error('handler broke');
      })
      .onError(() => undefined)
      .start();
    await until(() => ran.length >= 2);
    await sleep(10);
    const messages = lines.map((line) => [line.level, line.fields, line.message]);
    expect(messages).toContainEqual(['error', { reason: 'Error: disk full' }, 'Could not complete an event in the inbox; it will run again.']);
    expect(messages).toContainEqual(['error', { reason: 'Error: disk full' }, 'Could not fail an event in the inbox; it will run again.']);
    expect(await inner.stats()).toMatchObject({ done: 0, dead: 0, running: 2 });
  });
});

describe('the worker: what a failed event leaves', () => {
  it('the error of every failing handler, one per line, and one report each with its context', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry('k1'));
    const errors: WebhookError[] = [];
    const created = worker({ inbox, logger: {}, retry: { attempts: 1 } });
    created
      .on('message_sent', () => {
        throw new Error('first broke');
      })
      .on('message_sent', () => Promise.reject(new Error('second broke')))
      .onError((error) => void errors.push(error))
      .start();
    await until(async () => (await inbox.stats()).dead === 1);
    const [dead] = await inbox.list({ state: 'dead' });
    expect(dead?.lastError?.split('\n')).toHaveLength(2);
    expect(dead?.lastError).toMatch(/first broke[^\n]*\n[^\n]*second broke/);
    await until(() => errors.length === 2);
    expect(errors.map((error) => [error.code, error.key, error.attempt, error.willRetry, error.rawBody === fixture('message_sent')])).toEqual([
      ['handler_failed', 'k1', 1, false, true],
      ['handler_failed', 'k1', 1, false, true],
    ]);
    expect(errors.map((error) => (error.cause as Error).message)).toEqual(['first broke', 'second broke']);
    expect((errors[0]?.event as { trigger?: string } | undefined)?.trigger).toBe('message_sent');
  });

  it('an event cut off on its last attempt: dead with a message naming its trigger, reported with its context', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry('k1'));
    await inbox.claim({ leaseMs: 20, waitMs: 0 }); // a worker that died holding it
    const errors: WebhookError[] = [];
    worker({ inbox, logger: {}, leaseMs: 20, retry: { attempts: 1 } })
      .on('message_sent', () => undefined)
      .onError((error) => void errors.push(error))
      .start();
    await until(async () => (await inbox.stats()).dead === 1);
    const message = 'The handlers of a "message_sent" event were cut off on its last attempt (the process running them stopped); it is dead.';
    expect((await inbox.list({ state: 'dead' }))[0]?.lastError).toBe(message);
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ code: 'handler_interrupted', message, key: 'k1', attempt: 1, willRetry: false, rawBody: fixture('message_sent') });
    expect((errors[0]?.event as { trigger?: string } | undefined)?.trigger).toBe('message_sent');
  });

  it('an unknown trigger reaches onUnknown, not the handlers of a known one', async () => {
    const inbox = memoryInbox();
    const raw = fixture('message_sent').replace('"message_sent"', '"message_translated"');
    const event = JSON.parse(raw);
    await inbox.put({ key: 'u1', trigger: event.trigger, event, rawBody: raw, receivedAt: Date.now() });
    const seen: string[] = [];
    worker({ inbox, logger: {} })
      .on('message_sent', () => void seen.push('known'))
      .onUnknown((unknown) => void seen.push(`unknown:${unknown.trigger}`))
      .start();
    await until(async () => (await inbox.stats()).done === 1);
    expect(seen).toEqual(['unknown:message_translated']);
  });
});

describe('the worker: options and lifecycle', () => {
  const configurationError = (make: () => unknown) => {
    try {
      make();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return { option: (error as ConfigurationError).option, message: (error as Error).message };
    }
    throw new Error('accepted');
  };

  it('refuses each bad option with its name and what it must be', () => {
    const inbox = memoryInbox();
    const inboxNeeded = { option: 'inbox', message: 'A worker needs `inbox`: memoryInbox(), sqliteInbox({ path }), redisInbox({ url }) or postgresInbox({ connectionString }).' };
    expect(configurationError(() => createWorker({} as never))).toEqual(inboxNeeded);
    expect(configurationError(() => createWorker({ inbox: { ...inbox, claim: undefined } as unknown as Inbox }))).toEqual(inboxNeeded);
    expect(configurationError(() => createWorker({ inbox: { claim: () => undefined } as unknown as Inbox }))).toEqual(inboxNeeded);
    expect(configurationError(() => createWorker({ inbox: { put: () => undefined } as unknown as Inbox }))).toEqual(inboxNeeded);
    for (const concurrency of [0, 1.5, Number.NaN, 2 ** 53]) {
      expect(configurationError(() => createWorker({ inbox, concurrency }))).toEqual({
        option: 'concurrency',
        message: '`concurrency` must be a whole number, at least 1.',
      });
    }
    for (const leaseMs of [9, Number.NaN]) {
      expect(configurationError(() => createWorker({ inbox, leaseMs }))).toEqual({ option: 'leaseMs', message: '`leaseMs` must be at least 10 milliseconds.' });
    }
    for (const handlerTimeoutMs of [-1, Number.NaN]) {
      expect(configurationError(() => createWorker({ inbox, handlerTimeoutMs }))).toEqual({
        option: 'handlerTimeoutMs',
        message: '`handlerTimeoutMs` must be 0 (no limit) or a positive number.',
      });
    }
    expect(() => createWorker({ inbox, concurrency: 1, leaseMs: 10, handlerTimeoutMs: 0 })).not.toThrow();
  });

  it('runs eight events at once by default, and the number asked for otherwise; start() twice adds no loops', async () => {
    for (const [concurrency, expected] of [[undefined, 8], [3, 3]] as const) {
      const inbox = memoryInbox();
      for (let i = 0; i < 12; i++) await inbox.put(entry(`k${i}`));
      let running = 0;
      let most = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const created = worker({ inbox, logger: {}, ...(concurrency === undefined ? {} : { concurrency }) });
      created.on('message_sent', async () => {
        most = Math.max(most, ++running);
        await gate;
        running--;
      });
      created.start().start();
      await until(() => running === expected);
      await sleep(30);
      expect(most).toBe(expected);
      release();
      await until(async () => (await inbox.stats()).done === 12);
    }
  });

  it('waits 30 s for a handler by default before counting it failed', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry('k1'));
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((handler: () => void, ms?: number, ...rest: unknown[]) => {
      delays.push(ms ?? 0);
      return realSetTimeout(handler, ms, ...rest);
    }) as typeof setTimeout);
    try {
      let done = false;
      worker({ inbox, logger: {} })
        .on('message_sent', async () => {
          await new Promise((resolve) => realSetTimeout(resolve, 10));
          done = true;
        })
        .start();
      await until(() => done);
    } finally {
      spy.mockRestore();
    }
    expect(delays).toContain(30_000);
  });

  it('close() before start() resolves, and a closed worker can start again (its inbox kept open)', async () => {
    const inbox = memoryInbox();
    const ran: string[] = [];
    const created = worker({ inbox, logger: {}, closeInbox: false }).on('message_sent', (_event, { key }) => void ran.push(key));
    await created.close();
    created.start();
    await created.close();
    await inbox.put(entry('k1'));
    created.start();
    await until(() => ran.length === 1);
    expect(ran).toEqual(['k1']);
  });
});

describe('the worker: what it writes and how it cleans up', () => {
  it('fails an attempt with a retry time a backoff ahead, and the last one as dead, with the error', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    const fails: Array<{ at: number; outcome: unknown }> = [];
    const inbox = inboxWith({ fail: (claim, outcome) => (fails.push({ at: Date.now(), outcome }), inner.fail(claim, outcome)) }, inner);
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      worker({ inbox, logger: {}, retry: { attempts: 2, minDelayMs: 100, maxDelayMs: 1000 } })
        .on('message_sent', () => {
          throw new Error('broke');
        })
        .onError(() => undefined)
        .start();
      await until(async () => (await inner.stats()).dead === 1);
    } finally {
      random.mockRestore();
    }
    expect(fails).toHaveLength(2);
    const [first, last] = fails as [{ at: number; outcome: { retryAt: number; error: string } }, { outcome: unknown }];
    // Half of the first ceiling (100 ms), from about when it was written.
    expect(first.outcome.retryAt - first.at).toBeGreaterThanOrEqual(40);
    expect(first.outcome.retryAt - first.at).toBeLessThanOrEqual(55);
    expect(first.outcome).toEqual({ retryAt: expect.any(Number), error: 'A handler for "message_sent" failed: broke' });
    expect(last.outcome).toEqual({ dead: true, error: 'A handler for "message_sent" failed: broke' });
  });

  it('buries an interrupted event with a dead outcome, and logs when even that write fails', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    await inner.claim({ leaseMs: 20, waitMs: 0 });
    const outcomes: unknown[] = [];
    const { lines, logger } = recordingLogger();
    const inbox = inboxWith({ fail: (_claim, outcome) => (outcomes.push(outcome), Promise.reject(new Error('disk full'))) }, inner);
    worker({ inbox, logger, leaseMs: 20, retry: { attempts: 1 }, concurrency: 1 })
      .onError(() => undefined)
      .start();
    await until(() => outcomes.length > 0 && lines.length > 0);
    expect(outcomes[0]).toEqual({ dead: true, error: expect.stringContaining('were cut off on its last attempt') });
    expect(lines[0]).toEqual({ level: 'error', fields: { reason: 'Error: disk full' }, message: 'Could not fail an event in the inbox; it will run again.' });
  });

  it('stops renewing once the handlers finished, and warns of nothing while the lease holds', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    let renewals = 0;
    const inbox = inboxWith({ renew: (claim, leaseMs) => (renewals++, inner.renew(claim, leaseMs)) }, inner);
    const { lines, logger } = recordingLogger();
    worker({ inbox, logger, leaseMs: 30, concurrency: 1 })
      .on('message_sent', () => sleep(60))
      .start();
    await until(async () => (await inner.stats()).done === 1);
    const atDone = renewals;
    expect(atDone).toBeGreaterThan(0);
    await sleep(60);
    expect(renewals).toBe(atDone);
    expect(lines).toEqual([]);
  });

  it('a logger without warn or error: a lost lease and a failed write are skipped quietly, and close() resolves', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const inbox = inboxWith({ renew: () => Promise.resolve(false), complete: () => Promise.reject(new Error('disk full')) }, inner);
      let done = false;
      const created = createWorker({ inbox, logger: {}, leaseMs: 30, concurrency: 1 })
        .on('message_sent', async () => {
          await sleep(40);
          done = true;
        })
        .start();
      await until(() => done);
      await sleep(20);
      await expect(created.close()).resolves.toBeUndefined();
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
  });

  it('runs where timers are plain numbers without unref (as on Deno)', async () => {
    const inner = memoryInbox();
    await inner.put(entry('k1'));
    const realSetInterval = globalThis.setInterval;
    const intervals = vi
      .spyOn(globalThis, 'setInterval')
      .mockImplementation(((...args: Parameters<typeof setInterval>) => Number(realSetInterval(...args))) as unknown as typeof setInterval);
    try {
      const ran: string[] = [];
      worker({ inbox: inner, logger: {}, concurrency: 1 })
        .on('message_sent', (_event, { key }) => void ran.push(key))
        .start();
      await until(async () => (await inner.stats()).done === 1);
      expect(ran).toEqual(['k1']);
    } finally {
      intervals.mockRestore();
    }
  });

  it("a worker's own handler timeout and logger reach its handlers' dispatch", async () => {
    const inbox = memoryInbox();
    await inbox.put(entry('k1'));
    const { lines, logger } = recordingLogger();
    worker({ inbox, logger, handlerTimeoutMs: 30, retry: { attempts: 1 } })
      .on('message_sent', () => new Promise(() => undefined))
      .start();
    await until(async () => (await inbox.stats()).dead === 1);
    // No onError registered: the failure goes to the worker's logger.
    await until(() => lines.length > 0);
    expect(lines[0]?.level).toBe('error');
    expect(lines[0]?.message).toMatch(/register webhooks.onError/);
    expect((await inbox.list({ state: 'dead' }))[0]?.lastError).toMatch(/30 ms/);
  });
});

describe('who closes the inbox (src/delivery/inbox-users.ts)', () => {
  const auth = { username: 'u', password: 'p' };
  /** The inbox with its close() counted. */
  function countingInbox() {
    const inner = memoryInbox();
    const closes = { count: 0 };
    const inbox = inboxWith({ close: () => ((closes.count += 1), inner.close()) }, inner);
    return { inbox, inner, closes };
  }

  it("a worker's close() closes the inbox it alone was given, once, after its running handler finished", async () => {
    const { inbox, closes } = countingInbox();
    await inbox.put(entry('k1'));
    const steps: string[] = [];
    const created = createWorker({ inbox, logger: {}, concurrency: 1 })
      .on('message_sent', async () => {
        steps.push('handler started');
        await sleep(50);
        steps.push('handler finished');
      })
      .start();
    await until(() => steps.length === 1);
    await created.close();
    steps.push(`closed ${closes.count}`);
    await created.close();
    expect(steps).toEqual(['handler started', 'handler finished', 'closed 1']);
    expect(closes.count).toBe(1);
    await expect(inbox.put(entry('k2'))).rejects.toThrow(/closed/);
  });

  it('an inbox shared by a receiver and a worker is closed by the last of them to close, whichever it is', async () => {
    for (const order of [['receiver', 'worker'], ['worker', 'receiver']] as const) {
      const { inbox, closes } = countingInbox();
      const closers = {
        receiver: createWebhooks({ auth, inbox, consume: false }),
        worker: createWorker({ inbox, logger: {} }).start(),
      };
      await closers[order[0]].close();
      expect(closes.count).toBe(0);
      expect(await inbox.put(entry('still-open'))).toBe('stored');
      await closers[order[1]].close();
      expect(closes.count).toBe(1);
    }
  });

  it('a receiver consuming in its own process closes its inbox once, after its worker stopped', async () => {
    const { inbox, closes } = countingInbox();
    const webhooks = createWebhooks({ auth, inbox });
    await webhooks.close();
    await webhooks.close();
    expect(closes.count).toBe(1);
  });

  it('closeInbox: false (worker or receiver) keeps the inbox open for whoever made it, and for the others', async () => {
    const { inbox, closes } = countingInbox();
    const kept = createWorker({ inbox, logger: {}, closeInbox: false }).start();
    const other = createWorker({ inbox, logger: {} }).start();
    const receiver = createWebhooks({ auth, inbox, consume: false, closeInbox: false });
    await Promise.all([kept.close(), other.close(), receiver.close()]);
    expect(closes.count).toBe(0);
    expect(await inbox.stats()).toMatchObject({ pending: 0 });
    await inbox.close();
  });

  it('a receiver closes its inbox only after the requests waiting for a commit were answered', async () => {
    const inner = memoryInbox();
    let commit!: () => void;
    const steps: string[] = [];
    const inbox = inboxWith(
      {
        put: (stored) => new Promise((resolve) => (commit = () => resolve(inner.put(stored)))),
        close: () => (steps.push('inbox closed'), inner.close()),
      },
      inner,
    );
    const webhooks = createWebhooks({ auth, inbox, consume: false });
    const answer = webhooks
      .handle({
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
        body: fixture('message_sent'),
      })
      .then((response) => steps.push(`answered ${response.status}`));
    await until(() => commit !== undefined);
    const closed = webhooks.close().then(() => steps.push('receiver closed'));
    await sleep(30);
    expect(steps).toEqual([]);
    commit();
    await Promise.all([answer, closed]);
    expect(steps).toEqual(['answered 200', 'inbox closed', 'receiver closed']);
  });

  it('refuses a closeInbox that is not a boolean', () => {
    expect(() => createWorker({ inbox: memoryInbox(), closeInbox: 'yes' as unknown as boolean })).toThrow(/closeInbox/);
    expect(() => createWebhooks({ auth, inbox: memoryInbox(), closeInbox: 1 as unknown as boolean })).toThrow(/closeInbox/);
  });
});
