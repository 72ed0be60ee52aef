// An ES module application using the packed package with import, with Express and Fastify (the optional
// peer dependencies) installed beside it as an application would.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import express from 'express';
import Fastify from 'fastify';
import { createWebhooks, WebhookError } from 'chat-webhooks';
import { expressMiddleware } from 'chat-webhooks/express';
import { fastifyWebhooks } from 'chat-webhooks/fastify';
import { basicAuthHeader, createTestEvent } from 'chat-webhooks/testing';

const pkg = createRequire(import.meta.url)('chat-webhooks/package.json');
const auth = { username: 'consumer', password: 'secret' };
const authorization = basicAuthHeader(auth.username, auth.password);

/** Every subpath of the exports map loads, with no export left undefined. */
async function importEveryEntry() {
  const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => pkg.peerDependenciesMeta[name].optional);
  for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
    const specifier = subpath === '.' ? 'chat-webhooks' : `chat-webhooks/${subpath.slice(2)}`;
    let entry;
    try {
      entry = await import(specifier);
    } catch (error) {
      // chat-webhooks/sqlite needs better-sqlite3 (a native addon built for one Node at a time), not installed here:
      // the entry says so in one sentence naming it.
      const peer = error.code === 'ERR_CHAT_WEBHOOKS_MISSING_PEER' && optional.find((name) => error.message.includes(`peer ${name}:`));
      if (!peer) throw error;
      console.log(`${error.message}: skipped`);
      continue;
    }
    assert.ok(Object.keys(entry).length > 0, `${specifier} exports nothing`);
    for (const [name, value] of Object.entries(entry)) assert.notEqual(value, undefined, `${specifier}.${name} is undefined`);
  }
}

async function deliverThroughExpress() {
  const webhooks = createWebhooks({ auth });
  const received = [];
  webhooks.on('message_sent', (event) => received.push(event.data.message.id));
  const app = express();
  app.post('/webhooks', expressMiddleware(webhooks));
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const event = createTestEvent('message_sent');
  try {
    const response = await fetch(`http://127.0.0.1:${server.address().port}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'Application/json', authorization },
      body: JSON.stringify(event),
    });
    assert.equal(response.status, 200);
  } finally {
    server.close();
  }
  await webhooks.close();
  assert.deepEqual(received, [event.data.message.id]);
}

async function deliverThroughFastify() {
  const webhooks = createWebhooks({ auth });
  const received = [];
  webhooks.on('group_created', (event) => received.push(event.data.group.guid));
  const app = Fastify();
  await app.register(fastifyWebhooks, { webhooks, path: '/webhooks' });
  const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/webhooks`;
  const event = createTestEvent('group_created');
  const post = (headers, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  assert.equal((await post({ authorization }, JSON.stringify(event))).status, 200);
  assert.equal((await post({}, '{}')).status, 401);
  await app.close();
  await webhooks.close();
  assert.deepEqual(received, [event.data.group.guid]);
}

await importEveryEntry();
await deliverThroughExpress();
await deliverThroughFastify();
assert.throws(() => createTestEvent('message_sent', { data: { message: { id: 42 } } }), WebhookError);
console.log(`esm consumer ok on node ${process.version}`);
