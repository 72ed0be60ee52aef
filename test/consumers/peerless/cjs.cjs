// As esm.mjs, with require() (the CommonJS build).
'use strict';
const assert = require('node:assert/strict');

(async () => {
  const { FAILING, checkAwsFirstUse, checkFailure } = await import('./needs-peers.mjs');
  const pkg = require('chat-webhooks/package.json');
  const failed = [];
  for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
    const specifier = subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`;
    try {
      require(specifier);
    } catch (error) {
      checkFailure(specifier, error);
      failed.push(specifier);
    }
  }
  assert.deepEqual(failed.sort(), FAILING);
  console.log(`require: ${failed.length} entries name their missing peers: ${failed.join(', ')}`);
  await checkAwsFirstUse(require('chat-webhooks/aws'));
  console.log('require: chat-webhooks/aws names its missing SDK clients on first use');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
