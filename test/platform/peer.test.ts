/**
 * requirePeers: the one way an entry loads its optional peers, so that a missing one is a sentence naming the
 * entry, the peer and the install command (the same the CLI prints), not Node's "Cannot find module".
 * The packed package without any peer installed is tried for real by test/consumers/run.mjs (peerless/).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { MISSING_PEER, missingPeerMessage, requirePeers } from '../../src/platform/node.js';
import { notInstalled } from '../../src/platform/peer.js';
import * as web from '../../src/platform/web.js';

const caught = (run: () => unknown): Error & { code?: string; peers?: string[]; cause?: unknown } => {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
};

describe('requirePeers', () => {
  it('loads installed peers, in order', () => {
    const [bullmq, ioredis] = requirePeers('chat-webhooks/redis', ['bullmq', 'ioredis']) as [{ Queue: unknown }, { Redis: unknown }];
    expect(typeof bullmq.Queue).toBe('function');
    expect(typeof ioredis.Redis).toBe('function');
  });

  it('names one missing peer and how to install it', () => {
    const error = caught(() => requirePeers('chat-webhooks/example', ['chat-webhooks-no-such-peer']));
    expect(error.message).toBe('chat-webhooks/example needs its optional peer chat-webhooks-no-such-peer: npm install chat-webhooks-no-such-peer');
    expect(error.code).toBe(MISSING_PEER);
    expect(error.peers).toEqual(['chat-webhooks-no-such-peer']);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('MODULE_NOT_FOUND');
  });

  it('names every missing peer at once, not the installed ones', () => {
    const error = caught(() => requirePeers('chat-webhooks/example', ['no-such-peer-a', 'bullmq', 'no-such-peer-b']));
    expect(error.message).toBe('chat-webhooks/example needs its optional peers no-such-peer-a and no-such-peer-b: npm install no-such-peer-a no-such-peer-b');
    expect(error.peers).toEqual(['no-such-peer-a', 'no-such-peer-b']);
  });

  it('the sentence for the stores', () => {
    expect(missingPeerMessage('chat-webhooks/sqlite', ['better-sqlite3'])).toBe('chat-webhooks/sqlite needs its optional peer better-sqlite3: npm install better-sqlite3');
    expect(missingPeerMessage('chat-webhooks/aws', ['@aws-sdk/client-sqs', '@aws-sdk/client-dynamodb', 'x'])).toBe(
      'chat-webhooks/aws needs its optional peers @aws-sdk/client-sqs, @aws-sdk/client-dynamodb and x: npm install @aws-sdk/client-sqs @aws-sdk/client-dynamodb x',
    );
  });

  it('on web runtimes says the entry needs Node, Bun or Deno, even with the peer installed', () => {
    expect(caught(() => web.requirePeers('chat-webhooks/redis', ['bullmq'])).message).toMatch(/runs on Node\.js, Bun and Deno/);
  });
});

describe('notInstalled: the peer itself is missing, not something it imports', () => {
  it("is true for require()'s and import()'s failure on the peer", async () => {
    const required = caught(() => createRequireFailure('chat-webhooks-no-such-peer'));
    expect(notInstalled(required, 'chat-webhooks-no-such-peer')).toBe(true);
    const imported = await import('chat-webhooks-no-such-peer' as string).catch((error: unknown) => error);
    expect((imported as NodeJS.ErrnoException).code).toBe('ERR_MODULE_NOT_FOUND');
    expect(notInstalled(imported, 'chat-webhooks-no-such-peer')).toBe(true);
  });

  it('is false when the missing module is another one, or the failure is not a missing module', () => {
    const required = caught(() => createRequireFailure('chat-webhooks-no-such-peer'));
    expect(notInstalled(required, 'bullmq')).toBe(false);
    // The peer named only on a later line (a stack, "Require stack: - …/peer/index.js") is not the peer missing.
    expect(notInstalled({ code: 'MODULE_NOT_FOUND', message: "Cannot find module 'dep'\nRequire stack:\n- 'peer'" }, 'peer')).toBe(false);
    expect(notInstalled(Object.assign(new Error("'peer' failed to load"), { code: 'ERR_DLOPEN_FAILED' }), 'peer')).toBe(false);
    expect(notInstalled(undefined, 'peer')).toBe(false);
  });
});

function createRequireFailure(name: string): never {
  createRequire(import.meta.url)(name);
  throw new Error(`${name} loaded`);
}
