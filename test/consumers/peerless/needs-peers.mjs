// The entries that need optional peers, and the peers each names when none is installed. A new entry with a
// peer adds its line here (and loads its peers with requirePeers from #platform, src/platform/node.ts).
import assert from 'node:assert/strict';

export const NEEDS_PEERS = {
  'chat-webhooks/sqlite': ['better-sqlite3'],
  'chat-webhooks/redis': ['ioredis'],
  'chat-webhooks/postgres': ['pg'],
  'chat-webhooks/otel': ['@opentelemetry/api'],
};

// Entries that import their peer statically, so that they also load where no synchronous loader exists
// (Workers, bundlers): without the peer, Node's own "Cannot find" error names it. None today (chat-webhooks/otel
// was one until issue 38); kept so that such an entry is still noticed.
export const PLAIN_PEERS = {};

/** Every entry expected to fail without its peers. */
export const FAILING = [...Object.keys(NEEDS_PEERS), ...Object.keys(PLAIN_PEERS)].sort();

const sentence = (specifier, peers) =>
  `${specifier} needs its optional ${peers.length === 1 ? `peer ${peers[0]}` : `peers ${peers.slice(0, -1).join(', ')} and ${peers.at(-1)}`}: npm install ${peers.join(' ')}`;

/** The error an entry threw is the missing-peer one, with the exact sentence. */
export function checkFailure(specifier, error) {
  if (PLAIN_PEERS[specifier]) {
    assert.match(error.code, /MODULE_NOT_FOUND/, `${specifier}: ${error.stack}`);
    for (const peer of PLAIN_PEERS[specifier]) assert.ok(error.message.includes(peer), `${specifier}: ${error.message}`);
    return;
  }
  const peers = NEEDS_PEERS[specifier];
  if (!peers) throw error;
  assert.equal(error.code, 'ERR_CHAT_WEBHOOKS_MISSING_PEER', `${specifier}: ${error.stack}`);
  assert.equal(error.message, sentence(specifier, peers));
}

/**
 * chat-webhooks/aws loads its SDK clients on first use (Lambda's runtimes include them): without them, the
 * entry loads, the functions start (no unhandled rejection), and the first use names the missing client.
 */
export async function checkAwsFirstUse(aws) {
  const queue = aws.sqsQueue({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/events' });
  const idempotency = aws.dynamoIdempotency({ tableName: 'keys' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  const entry = { key: 'k', trigger: 'message_sent', event: {}, rawBody: '{}', receivedAt: Date.now() };
  const named = (peer) => (error) => {
    assert.equal(error.code, 'ERR_CHAT_WEBHOOKS_MISSING_PEER', error.stack);
    assert.equal(error.message, sentence('chat-webhooks/aws', [peer]));
    return true;
  };
  await assert.rejects(queue.put(entry), named('@aws-sdk/client-sqs'));
  await assert.rejects(idempotency.begin('k', 1000), named('@aws-sdk/client-dynamodb'));
}
