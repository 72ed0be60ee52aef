/**
 * Every adapter called without its receiver (`nodeMiddleware({ path })`, the options in its place, or nothing)
 * throws a `ConfigurationError` at the call, saying what to pass: before, the call passed and the first request
 * failed with `webhooks.respond is not a function`.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createWebhooks } from '../../src/index.js';
import { nodeMiddleware } from '../../adapters/node/index.js';
import { expressMiddleware } from '../../adapters/express/index.js';
import { fetchHandler } from '../../adapters/fetch/index.js';
import { honoHandler } from '../../adapters/hono/index.js';
import { lambdaHandler } from '../../adapters/lambda/index.js';
import { fastifyWebhooks } from '../../adapters/fastify/index.js';
import { sqsHandler } from '../../adapters/aws/index.js';

type Call = (webhooks: unknown) => unknown;
const adapters: Record<string, Call> = {
  nodeMiddleware: (webhooks) => nodeMiddleware(webhooks as never),
  expressMiddleware: (webhooks) => expressMiddleware(webhooks as never),
  fetchHandler: (webhooks) => fetchHandler(webhooks as never),
  honoHandler: (webhooks) => honoHandler(webhooks as never),
  lambdaHandler: (webhooks) => lambdaHandler(webhooks as never),
  sqsHandler: (webhooks) => sqsHandler(webhooks as never),
};

function refusal(call: Call, given: unknown): ConfigurationError {
  try {
    call(given);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('accepted');
}

describe('an adapter given no receiver refuses at the call', () => {
  const webhooks = createWebhooks({ auth: false, logger: {} });

  for (const [name, call] of Object.entries(adapters)) {
    it(name, () => {
      const misplaced = refusal(call, { path: '/webhooks' });
      expect(misplaced.option).toBe('webhooks');
      expect(misplaced.message).toMatch(new RegExp(`^${name} needs the receiver made by createWebhooks\\(\\{ auth: … \\}\\): `));
      expect(misplaced.message).toContain("It got an object with path (options in the receiver's place?).");
      expect(refusal(call, undefined).message).toContain('It got undefined.');
      expect(refusal(call, 'webhooks').message).toContain('It got a string.');
      expect(() => call(webhooks)).not.toThrow();
    });
  }

  it('nodeMiddleware({ path }) says how to call it', () => {
    expect(refusal(adapters.nodeMiddleware!, { path: '/webhooks' }).message).toContain('nodeMiddleware(webhooks, { path })');
  });

  it('fastifyWebhooks, when registered', async () => {
    const app = Fastify();
    app.register(fastifyWebhooks, { webhooks: { path: '/in' } } as never);
    await expect(app.ready()).rejects.toMatchObject({
      name: 'ConfigurationError',
      option: 'webhooks',
      message: expect.stringContaining('app.register(fastifyWebhooks, { webhooks, path }). It got an object with path'),
    });
    await app.close();
  });
});
