// docs/design.md's status table through the fetch adapter of the BUILT package, in any runtime with the web
// APIs (Request, Response, ReadableStream, TextEncoder, btoa, setTimeout): Node, Bun, Deno, workerd.
// No node:* import and no file access here, so a failure is the package's, not this script's.
// `runFetchTable(print)` prints TAP lines and returns the counts; ./run.mjs runs it as a program and
// test/runtimes.test.ts spawns each runtime on it. The rows mirror test/adapters/status-table.ts.
import { createWebhooks } from 'chat-webhooks';
import { fetchHandler } from 'chat-webhooks/fetch';
import messageSent from '../../fixtures/message_sent.json' with { type: 'json' };

const USER = 'platform';
const PASSWORD = 'pä:ss wörd';
const LIMIT = 4096;
const URL_BASE = 'https://hooks.example.com/webhooks';

/** Basic credentials as UTF-8 bytes in base64, with web APIs only (btoa takes one char per byte). */
function basicAuthHeader(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}
const AUTH = basicAuthHeader(USER, PASSWORD);
const JSON_HEADERS = { 'content-type': 'application/json', authorization: AUTH };
const FIXTURE = JSON.stringify(messageSent);

/** Waits until handlers that run after the response have run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A message_sent body of exactly `bytes` UTF-8 bytes (padded inside the text). */
function messageOfSize(bytes) {
  const event = structuredClone(messageSent);
  event.data.message.data.text = '';
  const base = new TextEncoder().encode(JSON.stringify(event)).byteLength;
  event.data.message.data.text = 'x'.repeat(bytes - base);
  return JSON.stringify(event);
}

class RowFailure extends Error {}
function check(condition, what) {
  if (!condition) throw new RowFailure(what);
}
function equal(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

/** A receiver with recording handlers behind a fetch handler, as the adapter suites use it. */
function setup(options = {}) {
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, maxBodyBytes: LIMIT, ...options });
  const events = [];
  const unknown = [];
  const errors = [];
  webhooks.on('message_sent', (event) => void events.push(event));
  webhooks.onUnknown((event) => void unknown.push(event));
  webhooks.onError((error) => void errors.push(error));
  const handler = fetchHandler(webhooks);
  const send = async ({ method = 'POST', headers = JSON_HEADERS, body } = {}) => {
    const response = await handler(new Request(URL_BASE, { method, headers, body }));
    return { status: response.status, headers: response.headers, body: await response.text() };
  };
  return { webhooks, handler, send, events, unknown, errors };
}

/** A body stream without a Content-Length that counts the chunks pulled and notes a cancel. */
function countingStream(body, chunkSize) {
  const stats = { pulled: 0, cancelled: false };
  let offset = 0;
  const stream = new ReadableStream(
    {
      pull(controller) {
        if (offset >= body.byteLength) return controller.close();
        stats.pulled += 1;
        controller.enqueue(body.slice(offset, offset + chunkSize));
        offset += chunkSize;
      },
      cancel() {
        stats.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, stats };
}
const streamed = (stream, headers = JSON_HEADERS) => new Request(URL_BASE, { method: 'POST', headers, body: stream, duplex: 'half' });

export const rows = [
  ['valid event: 200 OK, its handler called exactly once', async () => {
    const { send, events, errors } = setup();
    const response = await send({ body: FIXTURE });
    equal([response.status, response.body], [200, 'OK'], 'answer');
    await settle();
    equal(events.map((event) => event.trigger), ['message_sent'], 'events');
    equal(errors, [], 'errors');
  }],
  ['`Application/json; charset=UTF-8` is JSON', async () => {
    const { send, events } = setup();
    const headers = { ...JSON_HEADERS, 'content-type': 'Application/json; charset=UTF-8' };
    equal((await send({ headers, body: FIXTURE })).status, 200, 'status');
    await settle();
    equal(events.length, 1, 'events');
  }],
  ['multi-byte UTF-8 text arrives intact', async () => {
    const { send, events } = setup();
    const event = structuredClone(messageSent);
    event.data.message.data.text = 'Grüße 👋🏽 こんにちは — ñ';
    equal((await send({ body: JSON.stringify(event) })).status, 200, 'status');
    await settle();
    equal(events[0]?.data.message.data.text, 'Grüße 👋🏽 こんにちは — ñ', 'text');
  }],
  ['method is not POST: 405, Allow: POST, nothing dispatched', async () => {
    const { send, events } = setup();
    const response = await send({ method: 'GET', headers: { authorization: AUTH } });
    equal([response.status, response.headers.get('allow')], [405, 'POST'], 'answer');
    await settle();
    equal(events, [], 'events');
  }],
  ['body of exactly maxBodyBytes: 200; one byte more: 413', async () => {
    const { send, events, errors } = setup();
    equal((await send({ body: messageOfSize(LIMIT) })).status, 200, 'at the limit');
    equal((await send({ body: messageOfSize(LIMIT + 1) })).status, 413, 'one over');
    await settle();
    equal(events.length, 1, 'events');
    equal(errors.map((error) => error.code), ['payload_too_large'], 'errors');
  }],
  ['streamed body over the limit: 413, reading stops early and the stream is cancelled', async () => {
    const { handler, errors } = setup();
    const { stream, stats } = countingStream(new Uint8Array(1024 * 1024).fill(0x20), 1024);
    equal((await handler(streamed(stream))).status, 413, 'status');
    await settle();
    // 4096 + 1 bytes take 5 chunks of 1 KiB; a runtime may read a little ahead, nowhere near 1024.
    check(stats.pulled <= 8, `pulled ${stats.pulled} chunks of 1 KiB for a 4 KiB limit`);
    check(stats.cancelled, 'stream not cancelled');
    equal(errors.map((error) => error.code), ['payload_too_large'], 'errors');
  }],
  ['streamed body within the limit, no Content-Length: 200', async () => {
    const { handler, events } = setup();
    const { stream } = countingStream(new TextEncoder().encode(messageOfSize(LIMIT)), 100);
    equal((await handler(streamed(stream))).status, 200, 'status');
    await settle();
    equal(events.length, 1, 'events');
  }],
  ['a Content-Type that is not JSON: 415', async () => {
    const { send, events } = setup();
    equal((await send({ headers: { ...JSON_HEADERS, 'content-type': 'text/plain' }, body: FIXTURE })).status, 415, 'status');
    await settle();
    equal(events, [], 'events');
  }],
  ['Basic auth missing or wrong: 401, WWW-Authenticate, no body echoed, body never read', async () => {
    const { send, handler, events, errors } = setup();
    const missing = await send({ headers: { 'content-type': 'application/json' }, body: FIXTURE });
    const wrong = await send({ headers: { ...JSON_HEADERS, authorization: basicAuthHeader(USER, 'wrong') }, body: FIXTURE });
    for (const response of [missing, wrong]) {
      equal([response.status, response.headers.get('www-authenticate')], [401, 'Basic realm="webhooks"'], 'answer');
      check(!response.body.includes('superhero'), 'body echoed');
    }
    const { stream, stats } = countingStream(new TextEncoder().encode(FIXTURE), 100);
    equal((await handler(streamed(stream, { 'content-type': 'application/json' }))).status, 401, 'streamed status');
    equal(stats.pulled, 0, 'chunks pulled of an unauthenticated body');
    await settle();
    equal(events, [], 'events');
    equal(errors.map((error) => error.code), ['unauthorized', 'unauthorized', 'unauthorized'], 'errors');
  }],
  ['body is not JSON: 400, onError(invalid_json) with the raw body', async () => {
    const { send, errors } = setup();
    equal((await send({ body: '{"trigger":"message_sent",' })).status, 400, 'status');
    await settle();
    equal([errors[0]?.code, errors[0]?.rawBody], ['invalid_json', '{"trigger":"message_sent",'], 'error');
  }],
  ['JSON that is not an envelope: 400, onError(invalid_envelope)', async () => {
    const { send, errors } = setup();
    equal((await send({ body: '{"trigger":"message_sent","data":[]}' })).status, 400, 'status');
    await settle();
    equal(errors[0]?.code, 'invalid_envelope', 'error code');
  }],
  ['known trigger whose data fails its schema: 200 by default, onError(invalid_payload) with issues', async () => {
    const { send, events, errors } = setup();
    const body = '{"trigger":"message_sent","data":{"message":{"id":1}}}';
    equal((await send({ body })).status, 200, 'status');
    await settle();
    equal(events, [], 'events');
    equal([errors[0]?.code, errors[0]?.rawBody], ['invalid_payload', body], 'error');
    check(errors[0]?.issues?.some((issue) => issue.path.join('.') === 'data.message.id'), 'no issue at data.message.id');
  }],
  ["known trigger whose data fails its schema: 400 with invalidPayload: 'reject'", async () => {
    const { send, errors } = setup({ invalidPayload: 'reject' });
    equal((await send({ body: '{"trigger":"message_sent","data":{"message":{"id":1}}}' })).status, 400, 'status');
    await settle();
    equal(errors[0]?.code, 'invalid_payload', 'error code');
  }],
  ['unknown trigger: 200, to onUnknown', async () => {
    const { send, unknown, events } = setup();
    equal((await send({ body: '{"trigger":"poll_voted","data":{"poll":{"id":"7"}}}' })).status, 200, 'status');
    await settle();
    equal(unknown.map((event) => event.trigger), ['poll_voted'], 'unknown');
    equal(events, [], 'events');
  }],
  ['a repeat of a delivery already taken: 200, handlers not run again', async () => {
    const { send, events } = setup();
    equal((await send({ body: FIXTURE })).status, 200, 'first');
    equal((await send({ body: FIXTURE })).status, 200, 'repeat');
    await settle();
    equal(events.length, 1, 'handler runs');
  }],
  ['shutting down: 503, Retry-After', async () => {
    const { send, webhooks, events } = setup();
    await webhooks.close();
    const response = await send({ body: FIXTURE });
    equal(response.status, 503, 'status');
    check(response.headers.get('retry-after') !== null, 'no Retry-After');
    await settle();
    equal(events, [], 'events');
  }],
];

/** Runs every row, printing TAP through `print`; a row's failure never stops the others. */
export async function runFetchTable(print) {
  print('TAP version 13');
  print(`1..${rows.length}`);
  let passed = 0;
  for (const [index, [name, row]] of rows.entries()) {
    try {
      await row();
      passed += 1;
      print(`ok ${index + 1} - ${name}`);
    } catch (error) {
      print(`not ok ${index + 1} - ${name}`);
      const reason = error instanceof RowFailure ? error.message : String(error?.stack ?? error);
      for (const line of reason.split('\n')) print(`  # ${line}`);
    }
  }
  const failed = rows.length - passed;
  print(`# passed ${passed}, failed ${failed}`);
  return { passed, failed };
}
