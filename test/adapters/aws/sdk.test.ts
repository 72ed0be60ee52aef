/**
 * The AWS SDK's loading (adapters/aws/sdk.ts): the installed clients, a missing peer named as the other entries
 * name theirs, any other failure passed on as it is, and the client of the options or one made on first use.
 * A peer cannot be uninstalled under a running suite, so `named` is given real failed imports of modules that
 * do not exist; the packed package without its peers is tried by test/consumers/run.mjs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { clientOf, loadDynamo, loadSqs, named } from '../../../adapters/aws/sdk.js';
import { MISSING_PEER } from '../../../src/platform/peer.js';

describe('loading the AWS SDK', () => {
  it('loads the installed clients, once', async () => {
    expect((await loadSqs()).SQSClient).toBe(SQSClient);
    expect((await loadDynamo()).DynamoDBClient).toBe(DynamoDBClient);
    expect(loadSqs()).toBe(loadSqs());
    expect(loadDynamo()).toBe(loadDynamo());
  });

  it('a peer that is not installed is named with the command that installs it', async () => {
    const failed = await named('chat-webhooks-no-such-sdk', import('chat-webhooks-no-such-sdk' as string)).catch((error: unknown) => error);
    expect(failed).toMatchObject({
      message: 'chat-webhooks/aws needs its optional peer chat-webhooks-no-such-sdk: npm install chat-webhooks-no-such-sdk',
      code: MISSING_PEER,
      peers: ['chat-webhooks-no-such-sdk'],
    });
    expect((failed as { cause: NodeJS.ErrnoException }).cause.code).toBe('ERR_MODULE_NOT_FOUND');
  });

  it('any other failure to load is passed on as it is', async () => {
    // The peer is there, but something it imports is not: that is not "install the peer".
    const inner = await import('chat-webhooks-no-such-dependency' as string).catch((error: unknown) => error);
    await expect(named('@aws-sdk/client-sqs', Promise.reject(inner))).rejects.toBe(inner);
    const broken = new Error('the module threw as it loaded');
    await expect(named('@aws-sdk/client-sqs', Promise.reject(broken))).rejects.toBe(broken);
  });

  it('clientOf: the given client, else the one made, whose failure waits for a use to report it', async () => {
    const given = new SQSClient({ region: 'us-east-1' });
    const made = new SQSClient({ region: 'us-east-1' });
    try {
      let makes = 0;
      const make = async () => {
        makes += 1;
        return made;
      };
      expect(await clientOf(given, make)).toBe(given);
      expect(makes).toBe(0);
      expect(await clientOf(undefined, make)).toBe(made);
      expect(makes).toBe(1);
    } finally {
      given.destroy();
      made.destroy();
    }
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = clientOf<SQSClient>(undefined, () => Promise.reject(new Error('no SDK')));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
      await expect(failing).rejects.toThrow('no SDK');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
