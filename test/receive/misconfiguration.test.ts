/**
 * Setups that were accepted and then failed later, or never ran (issue 38, item 4): each now says so at the call
 * that made it, in `health()`, or in the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, createWebhooks, createWorker, memoryInbox, type WebhookError, type WebhookLogger } from '../../src/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string | undefined;
}

function recordingLogger(): { logger: WebhookLogger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message?: string) => void lines.push({ level, fields, message });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

function refusal(make: () => unknown): ConfigurationError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('accepted');
}

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('handlers on a receiver with consume: false', () => {
  it('warn once, at the first on(), onAny() or onUnknown(), through the receiver’s logger', () => {
    const { logger, lines } = recordingLogger();
    const webhooks = createWebhooks({ auth: false, inbox: memoryInbox(), consume: false, logger });
    closers.push(() => webhooks.close());
    // onError and onDuplicate serve a receiver that only stores: no warning.
    webhooks.onError(() => undefined).onDuplicate(() => undefined);
    expect(lines).toEqual([]);
    expect(webhooks.on('message_sent', () => undefined)).toBe(webhooks);
    webhooks.onAny(() => undefined).onUnknown(() => undefined).on(['message_sent', 'message_edited'], () => undefined);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', fields: { method: 'on', inbox: 'memory' } });
    expect(lines[0]!.message).toBe(
      'on() on a receiver created with `consume: false`: it stores deliveries and runs no handler for them. ' +
        'Register the handlers on a worker reading the same inbox (createWorker({ inbox })), or leave `consume` out to run them here.',
    );
  });

  it('names the method registered first', () => {
    const { logger, lines } = recordingLogger();
    const webhooks = createWebhooks({ auth: false, inbox: memoryInbox(), consume: false, logger });
    closers.push(() => webhooks.close());
    webhooks.onAny(() => undefined);
    expect(lines.map((line) => line.fields.method)).toEqual(['onAny']);
  });

  it('say nothing where the handlers run: an in-process worker, or no inbox', () => {
    const { logger, lines } = recordingLogger();
    for (const options of [{ inbox: memoryInbox() }, { inbox: memoryInbox(), consume: true }, {}]) {
      const webhooks = createWebhooks({ auth: false, logger, ...options });
      closers.push(() => webhooks.close());
      webhooks.on('message_sent', () => undefined).onAny(() => undefined);
    }
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
  });
});

describe('consume: false without an inbox', () => {
  it('is refused: nothing would be left for workers, and the handlers would run here all the same', () => {
    const error = refusal(() => createWebhooks({ auth: false, consume: false }));
    expect(error.option).toBe('consume');
    expect(error.message).toBe(
      '`consume: false` leaves the handlers to workers (createWorker) reading the same inbox: give `inbox` too ' +
        '(memoryInbox(), sqliteInbox({ path }), redisInbox({ url }) or postgresInbox({ connectionString })), or leave `consume` out to run them here.',
    );
    expect(() => createWebhooks({ auth: false, consume: true }).close()).not.toThrow();
  });
});

describe('a worker whose start() was never called', () => {
  it('reports not_started in health(), not ok; started after start()', async () => {
    const worker = createWorker({ inbox: memoryInbox(), logger: {} });
    closers.push(() => worker.close());
    expect(await worker.health()).toEqual({ ok: false, inbox: 'ok', closing: false, worker: 'not_started' });
    worker.start();
    expect(await worker.health()).toEqual({ ok: true, inbox: 'ok', closing: false, worker: 'started' });
  });
});

describe('misspelled worker options', () => {
  it('createWorker refuses an unknown option with the closest known one', () => {
    const error = refusal(() => createWorker({ inbox: memoryInbox(), concurency: 4 } as never));
    expect(error.option).toBe('concurency');
    expect(error.message).toMatch(/^Unknown option "concurency" for createWorker\. Did you mean "concurrency"\?/);
    expect(error.message).toContain('Known options: inbox, concurrency, retry, leaseMs, handlerTimeoutMs, logger, telemetry, closeInbox, transaction.');
  });

  it("createWebhooks refuses one in `worker`, listing only what `worker` takes", () => {
    const error = refusal(() => createWebhooks({ auth: false, inbox: memoryInbox(), worker: { concurency: 4 } as never }));
    expect(error.option).toBe('concurency');
    expect(error.message).toMatch(/^Unknown option "concurency" for the `worker` of createWebhooks\. Did you mean "concurrency"\?/);
    expect(error.message).toContain('Known options: concurrency, retry, leaseMs, transaction.');
    // What the receiver sets from its own options is not `worker`'s to take.
    expect(refusal(() => createWebhooks({ auth: false, inbox: memoryInbox(), worker: { logger: {} } as never })).option).toBe('logger');
  });
});

describe('the inbox messages name every inbox', () => {
  const every = 'memoryInbox(), sqliteInbox({ path }), redisInbox({ url }) or postgresInbox({ connectionString })';
  it('createWorker and createWebhooks', () => {
    expect(refusal(() => createWorker({} as never)).message).toBe(`A worker needs \`inbox\`: ${every}.`);
    expect(refusal(() => createWebhooks({ auth: false, inbox: {} as never })).message).toBe(`\`inbox\` must be an Inbox: ${every}.`);
  });
});

describe('WebhookError.status is the status sent', () => {
  const invalid = { ...createTestEvent('message_sent'), data: { message: { id: 7 } } };

  it("200 for an invalid payload accepted (invalidPayload: 'accept', the default)", async () => {
    const errors: WebhookError[] = [];
    const webhooks = createWebhooks({ auth: false, logger: {} }).onError((error) => void errors.push(error));
    closers.push(() => webhooks.close());
    const response = await webhooks.handle(buildRequest(invalid));
    await response.done;
    expect(response.status).toBe(200);
    expect(errors.map((error) => [error.code, error.status])).toEqual([['invalid_payload', 200]]);
    // The rest of the error is the parser's: issues, raw body, envelope.
    expect(errors[0]!.issues?.length).toBeGreaterThan(0);
    expect(errors[0]!.rawBody).toBe(JSON.stringify(invalid));
    expect(errors[0]!.event).toMatchObject({ trigger: 'message_sent' });
  });

  it("400 with invalidPayload: 'reject'", async () => {
    const errors: WebhookError[] = [];
    const webhooks = createWebhooks({ auth: false, logger: {}, invalidPayload: 'reject' }).onError((error) => void errors.push(error));
    closers.push(() => webhooks.close());
    const response = await webhooks.handle(buildRequest(invalid));
    await response.done;
    expect(response.status).toBe(400);
    expect(errors.map((error) => [error.code, error.status])).toEqual([['invalid_payload', 400]]);
  });
});

describe('a 405', () => {
  it('reaches the debug log', async () => {
    const { logger, lines } = recordingLogger();
    const webhooks = createWebhooks({ auth: false, logger, logLevel: 'debug' });
    closers.push(() => webhooks.close());
    const response = await webhooks.handle({ method: 'GET', headers: {}, body: '' });
    expect(response.status).toBe(405);
    expect(lines).toEqual([
      { level: 'debug', fields: { status: 405, method: 'GET' }, message: 'Refused a webhook request: deliveries must use POST.' },
    ]);
  });
});
