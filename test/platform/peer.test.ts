/**
 * requirePeers: the one way an entry loads its optional peers, so that a missing one is a sentence naming the
 * entry, the peer and the install command (the same the CLI prints), not Node's "Cannot find module".
 * The packed package without any peer installed is tried for real by test/consumers/run.mjs (peerless/).
 */
import { describe, expect, it } from 'vitest';
import { MISSING_PEER, missingPeerMessage, requirePeers } from '../../src/platform/node.js';
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
