// A CommonJS application using the packed package with require(), as on Node 20 before 20.19 (no require()
// of ES modules there: test/consumers/run.mjs also runs this with --no-experimental-require-module).
'use strict';
const assert = require('node:assert/strict');
const { createServer } = require('node:http');

const pkg = require('chat-webhooks/package.json');
const { createWebhooks, WebhookError } = require('chat-webhooks');
const { nodeMiddleware } = require('chat-webhooks/node');
const { lambdaHandler } = require('chat-webhooks/lambda');
const { fetchHandler } = require('chat-webhooks/fetch');
const { createTestEvent, basicAuthHeader } = require('chat-webhooks/testing');

const auth = { username: 'consumer', password: 'secret' };

/**
 * The optional peer dependency an entry failed to load for, if that is why (chat-webhooks/sqlite needs
 * better-sqlite3, a native addon built for one Node at a time, which the smoke project does not install).
 */
function missingOptionalPeer(error) {
  const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => pkg.peerDependenciesMeta[name].optional);
  return error.code === 'ERR_CHAT_WEBHOOKS_MISSING_PEER' && optional.find((name) => error.message.includes(`peer ${name}:`));
}

/** Every subpath of the exports map loads, with no export left undefined (or lacks only an optional peer). */
function requireEveryEntry() {
  for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
    const specifier = subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`;
    let entry;
    try {
      entry = require(specifier);
    } catch (error) {
      const peer = missingOptionalPeer(error);
      if (!peer) throw error;
      console.log(`${error.message}: skipped`);
      continue;
    }
    assert.ok(Object.keys(entry).length > 0, `${specifier} exports nothing`);
    for (const [name, value] of Object.entries(entry)) assert.notEqual(value, undefined, `${specifier}.${name} is undefined`);
  }
}

async function deliverOverHttp() {
  const webhooks = createWebhooks({ auth });
  const received = [];
  webhooks.on('message_sent', (event) => received.push(event.data.message.id));
  const server = createServer(nodeMiddleware(webhooks, { path: '/webhooks' }));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/webhooks`;
  const event = createTestEvent('message_sent');
  const post = (authorization) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(event) });
  try {
    assert.equal((await post(basicAuthHeader(auth.username, auth.password))).status, 200);
    assert.equal((await post(basicAuthHeader(auth.username, 'wrong'))).status, 401);
  } finally {
    server.close();
  }
  await webhooks.close();
  assert.deepEqual(received, [event.data.message.id]);
}

async function deliverThroughLambdaAndFetch() {
  const webhooks = createWebhooks({ auth });
  const received = [];
  webhooks.onAny((event) => received.push(event.trigger));
  const headers = { 'content-type': 'application/json', authorization: basicAuthHeader(auth.username, auth.password) };
  const lambda = lambdaHandler(webhooks);
  const result = await lambda({
    version: '2.0', routeKey: '$default', rawPath: '/webhooks', rawQueryString: '', headers, isBase64Encoded: false,
    body: JSON.stringify(createTestEvent('group_created')),
    requestContext: { http: { method: 'POST', path: '/webhooks', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'x' } },
  });
  assert.equal(result.statusCode, 200);
  const handler = fetchHandler(webhooks, { awaitHandlers: true });
  const body = JSON.stringify(createTestEvent('group_deleted'));
  assert.equal((await handler(new Request('http://x/webhooks', { method: 'POST', headers, body }))).status, 200);
  await webhooks.close();
  assert.deepEqual(received, ['group_created', 'group_deleted']);
}

function sameErrorClassAcrossEntries() {
  // chat-webhooks/testing throws the WebhookError of chat-webhooks: one copy of the library per format.
  assert.throws(() => createTestEvent('message_sent', { data: { message: { id: 42 } } }), WebhookError);
}

(async () => {
  requireEveryEntry();
  await deliverOverHttp();
  await deliverThroughLambdaAndFetch();
  sameErrorClassAcrossEntries();
  console.log(`cjs consumer ok on node ${process.version}`);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
