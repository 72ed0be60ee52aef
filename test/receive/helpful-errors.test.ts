/**
 * Mistakes in setting the receiver up are said at the call that made them, in words that name the fix:
 * misspelled options and triggers get a "did you mean", a missing handler is not eventemitter3's TypeError,
 * and `logLevel` (or DEBUG=chat-webhooks) shows each refusal and each recognized repeat.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { fetchHandler } from '../../adapters/fetch/index.js';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { ConfigurationError, createWebhooks, type WebhookLogger } from '../../src/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';

const auth = { username: 'u', password: 'p' };

describe('unknown options', () => {
  it('are refused with the closest known option and the list of all', () => {
    const call = () => createWebhooks({ auth, maxBodyByte: 10 } as never);
    expect(call).toThrowError(expect.objectContaining({ name: 'ConfigurationError', option: 'maxBodyByte' }));
    expect(call).toThrow(
      'Unknown option "maxBodyByte" for createWebhooks. Did you mean "maxBodyBytes"? Known options: auth, maxBodyBytes, bodyTimeoutMs, invalidPayload, dedupe, handlerTimeoutMs, inbox, consume, worker, closeInbox, commitTimeoutMs, idempotencyKeys, logger, logLevel, telemetry, catchUp.',
    );
  });

  it('get the list alone when nothing is near', () => {
    expect(() => createWebhooks({ auth, port: 3000 } as never)).toThrow(/^Unknown option "port" for createWebhooks\. Known options: auth,/);
  });

  it('include a bad logLevel', () => {
    expect(() => createWebhooks({ auth, logLevel: 'verbose' } as never)).toThrow("`logLevel` must be one of 'debug', 'info', 'warn', 'error', 'silent'.");
  });
});

describe('unknown adapter options', () => {
  const webhooks = createWebhooks({ auth });

  it.each([
    ['expressMiddleware', () => expressMiddleware(webhooks, { pth: '/webhooks' } as never), 'pth', 'path'],
    ['nodeMiddleware', () => nodeMiddleware(webhooks, { paht: '/webhooks' } as never), 'paht', 'path'],
    ['fetchHandler', () => fetchHandler(webhooks, { awaitHandler: true } as never), 'awaitHandler', 'awaitHandlers'],
    ['lambdaHandler', () => lambdaHandler(webhooks, { timeBudget: 100 } as never), 'timeBudget', 'timeBudgetMs'],
  ])('%s refuses a misspelled option with a suggestion', (where, call, wrong, right) => {
    expect(call).toThrowError(expect.objectContaining({ name: 'ConfigurationError', option: wrong }));
    expect(call).toThrow(`Unknown option "${wrong}" for ${where}. Did you mean "${right}"?`);
  });

  it("fastifyWebhooks refuses one at register time, and takes Fastify's own register options", async () => {
    const wrong = Fastify();
    await expect(wrong.register(fastifyWebhooks, { webhooks, paht: '/hooks' } as never)).rejects.toThrow(
      'Unknown option "paht" for fastifyWebhooks. Did you mean "path"?',
    );
    const right = Fastify();
    await right.register(fastifyWebhooks, { webhooks, path: '/hooks', prefix: '/chat', logLevel: 'warn' });
    expect((await right.inject({ method: 'GET', url: '/chat/hooks' })).statusCode).toBe(405);
    await right.close();
  });
});

describe('handlers and triggers', () => {
  const webhooks = createWebhooks({ auth });

  it('a misspelled trigger names the closest known one', () => {
    expect(() => webhooks.on('mesage_sent' as never, () => {})).toThrow(
      'Unknown trigger "mesage_sent". Did you mean "message_sent"? Deliveries of triggers this version does not know go to onUnknown.',
    );
    expect(() => webhooks.on(['group_created', 'group_craeted'] as never, () => {})).toThrow(/"group_craeted"\. Did you mean "group_created"/);
  });

  it('on() without a function is a ConfigurationError naming the call, not a TypeError', () => {
    const call = () => webhooks.on('message_sent', undefined as never);
    expect(call).toThrow(ConfigurationError);
    expect(call).toThrow('on("message_sent", handler) needs a function as its handler, got undefined.');
    expect(() => webhooks.onAny('nope' as never)).toThrow('onAny needs a function as its handler, got "nope".');
    expect(() => webhooks.onUnknown(null as never)).toThrow('onUnknown needs a function as its handler, got null.');
    expect(() => webhooks.onError({} as never)).toThrow('onError needs a function as its handler, got object.');
    expect(() => webhooks.on(42 as never, () => {})).toThrow('on() takes a trigger name or a list of them first, got number.');
  });

  it('createTestEvent names the closest trigger instead of calling the body an invalid envelope', () => {
    const call = () => createTestEvent('mesage_sent' as never);
    expect(call).toThrow(ConfigurationError);
    expect(call).toThrow(/^createTestEvent\("mesage_sent"\): Unknown trigger "mesage_sent"\. Did you mean "message_sent"\?/);
  });
});

describe('logLevel', () => {
  const saved = process.env.DEBUG;
  afterEach(() => {
    if (saved === undefined) delete process.env.DEBUG;
    else process.env.DEBUG = saved;
    vi.restoreAllMocks();
  });

  /** A logger that records what it is given. */
  function recording() {
    const lines: string[] = [];
    const logger: WebhookLogger = {
      debug: (_fields, message) => lines.push(`debug ${message}`),
      warn: (_fields, message) => lines.push(`warn ${message}`),
    };
    return { lines, logger };
  }

  async function refuseAndRepeat(webhooks: ReturnType<typeof createWebhooks>) {
    const event = createTestEvent('message_sent');
    await (await webhooks.handle(buildRequest(event, { auth: { username: 'u', password: 'wrong' } }))).done;
    for (let i = 0; i < 2; i++) await (await webhooks.handle(buildRequest(event, { auth }))).done;
  }

  it("'debug' logs each refusal and each recognized repeat", async () => {
    const { lines, logger } = recording();
    const webhooks = createWebhooks({ auth, logger, logLevel: 'debug' });
    webhooks.onError(() => {});
    await refuseAndRepeat(webhooks);
    expect(lines).toEqual([
      'debug Refused a webhook request: The request lacks valid Basic credentials for this webhook.',
      'debug Ignored a repeated delivery.',
    ]);
  });

  it("'warn' keeps debug lines from a given logger", async () => {
    const { lines, logger } = recording();
    const webhooks = createWebhooks({ auth, logger, logLevel: 'warn' });
    webhooks.onError(() => {});
    await refuseAndRepeat(webhooks);
    expect(lines).toEqual([]);
  });

  it('the console logger is quiet about them by default, and speaks with DEBUG=chat-webhooks', async () => {
    delete process.env.DEBUG;
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const quiet = createWebhooks({ auth });
    quiet.onError(() => {});
    await refuseAndRepeat(quiet);
    expect(debug).not.toHaveBeenCalled();

    process.env.DEBUG = 'express:*,chat-webhooks';
    const chatty = createWebhooks({ auth });
    chatty.onError(() => {});
    await refuseAndRepeat(chatty);
    expect(debug.mock.calls.map(([message]) => message)).toEqual([
      '[chat-webhooks] Refused a webhook request: The request lacks valid Basic credentials for this webhook. {"code":"unauthorized","status":401}',
      // The repeat's idempotency key (documented for message_sent: the message id) is logged with it.
      expect.stringMatching(/^\[chat-webhooks\] Ignored a repeated delivery\. \{"trigger":"message_sent","key":"[^"]*:message_sent:[^"]+"\}$/),
    ]);
  });
});
