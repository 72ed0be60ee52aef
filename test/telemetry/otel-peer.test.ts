/**
 * `chat-webhooks/otel` without `@opentelemetry/api` installed says what to install, in the sentence the other
 * entries with a peer say (src/platform/peer.ts), from `import` and `require()` alike: it used to fail with
 * Node's ERR_MODULE_NOT_FOUND. The built package runs from a folder where no peer resolves
 * (test/support/peerless-package.ts); the packed package without any peer is tried by test/consumers/run.mjs.
 */
import { describe, expect, it } from 'vitest';
import { peerlessPackage } from '../support/peerless-package.js';

const peerless = peerlessPackage();
const SENTENCE = 'chat-webhooks/otel needs its optional peer @opentelemetry/api: npm install @opentelemetry/api';
const report = '(e) => console.log(JSON.stringify({ code: e.code, message: e.message }))';

describe('chat-webhooks/otel without @opentelemetry/api', () => {
  it('import names the peer and the command that installs it', () => {
    const loaded = peerless.run('esm.mjs', `import('chat-webhooks/otel').then(() => console.log('{}'), ${report});\n`);
    expect(loaded).toEqual({ code: 'ERR_CHAT_WEBHOOKS_MISSING_PEER', message: SENTENCE });
  });

  it('require() too', () => {
    const loaded = peerless.run('cjs.cjs', `try { require('chat-webhooks/otel'); console.log('{}'); } catch (e) { (${report})(e); }\n`);
    expect(loaded).toEqual({ code: 'ERR_CHAT_WEBHOOKS_MISSING_PEER', message: SENTENCE });
  });

  it('the main entry still loads there: only the entry with the peer needs it', () => {
    const loaded = peerless.run('main.mjs', `import('chat-webhooks').then((m) => console.log(JSON.stringify({ code: typeof m.createWebhooks })), ${report});\n`);
    expect(loaded).toEqual({ code: 'function' });
  });
});
