// The packed package with none of its optional peers installed, imported as an ES module: every entry loads,
// or fails with one sentence naming its missing peer and the install command (code
// ERR_CHAT_WEBHOOKS_MISSING_PEER), never Node's "Cannot find module". NEEDS_PEERS: the entries that must.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { FAILING, checkAwsFirstUse, checkFailure } from './needs-peers.mjs';

const pkg = createRequire(import.meta.url)('chat-webhooks/package.json');
const failed = [];
for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
  const specifier = subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`;
  try {
    await import(specifier);
  } catch (error) {
    checkFailure(specifier, error);
    failed.push(specifier);
  }
}
assert.deepEqual(failed.sort(), FAILING);
console.log(`import: ${failed.length} entries name their missing peers: ${failed.join(', ')}`);
await checkAwsFirstUse(await import('chat-webhooks/aws'));
console.log('import: chat-webhooks/aws names its missing SDK clients on first use');
