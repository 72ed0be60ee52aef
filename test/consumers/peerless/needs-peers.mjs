// The entries that need optional peers, and the peers each names when none is installed. A new entry with a
// peer adds its line here (and loads its peers with requirePeers from #platform, src/platform/node.ts).
import assert from 'node:assert/strict';

export const NEEDS_PEERS = {
  'chat-webhooks/sqlite': ['better-sqlite3'],
  'chat-webhooks/redis': ['bullmq', 'ioredis'],
  'chat-webhooks/postgres': ['pg'],
};

const sentence = (specifier, peers) =>
  `${specifier} needs its optional ${peers.length === 1 ? `peer ${peers[0]}` : `peers ${peers.slice(0, -1).join(', ')} and ${peers.at(-1)}`}: npm install ${peers.join(' ')}`;

/** The error an entry threw is the missing-peer one, with the exact sentence. */
export function checkFailure(specifier, error) {
  const peers = NEEDS_PEERS[specifier];
  if (!peers) throw error;
  assert.equal(error.code, 'ERR_CHAT_WEBHOOKS_MISSING_PEER', `${specifier}: ${error.stack}`);
  assert.equal(error.message, sentence(specifier, peers));
}
