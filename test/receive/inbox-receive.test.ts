/**
 * Receiving with an inbox, through `webhooks.handle`: the status codes, duplicates, failed and slow commits,
 * repeats during a pending commit, `consume: false`, and the in-process worker (retries, dead events,
 * handler timeouts, leases cut off by a crash).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createWebhooks,
  createWorker,
  memoryInbox,
  type HandlerContext,
  type Inbox,
  type InboxEntry,
  type PutResult,
  WebhookError,
  type Webhooks,
  type WebhooksOptions,
  type Worker,
} from '../../src/index.js';
import { buildRequest } from '../../src/testing/index.js';

const auth = { username: 'platform', password: 's3cret' };
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8');
const request = (body: string) => buildRequest(body, { auth });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FAST_RETRY = { attempts: 3, minDelayMs: 1, maxDelayMs: 5 };

const open: Array<Webhooks | Worker> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((closable) => closable.close()));
});

function receiver(options: Partial<WebhooksOptions> = {}) {
  const webhooks = createWebhooks({ auth, logger: {}, ...options });
  open.push(webhooks);
  const errors: WebhookError[] = [];
  webhooks.onError((error) => void errors.push(error));
  return { webhooks, errors };
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** The inbox with another `put` (the stores are classes: their methods do not survive a spread). */
function withPut(inner: Inbox, put: Inbox['put']): Inbox {
  return {
    kind: inner.kind,
    durable: inner.durable,
    put,
    claim: (options) => inner.claim(options),
    renew: (claim, leaseMs) => inner.renew(claim, leaseMs),
    complete: (claim) => inner.complete(claim),
    fail: (claim, outcome) => inner.fail(claim, outcome),
    stats: () => inner.stats(),
    list: (options) => inner.list(options),
    retry: (keys) => inner.retry(keys),
    purge: (options) => inner.purge(options),
    close: () => inner.close(),
  };
}

/** A memory inbox whose puts wait at a gate the test opens (or fails). */
function gatedInbox() {
  const inner = memoryInbox();
  const gates: Array<{ open: () => void; fail: (error: Error) => void }> = [];
  const puts: InboxEntry[] = [];
  const inbox = withPut(inner, (entry) => {
    puts.push(entry);
    return new Promise<PutResult>((resolve, reject) => {
      gates.push({ open: () => resolve(inner.put(entry)), fail: reject });
    });
  });
  return { inbox, inner, gates, puts };
}

describe('createWebhooks({ inbox }): answers', () => {
  it('200 once stored; the in-process worker runs the handler with { key, attempt, receivedAt }', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox });
    const seen: Array<[string, HandlerContext]> = [];
    webhooks.on('message_sent', (event, context) => void seen.push([event.data.message.id, { ...context }]));
    const before = Date.now();
    const response = await webhooks.handle(request(fixture('message_sent')));
    expect(response).toMatchObject({ status: 200, body: 'OK' });
    await until(async () => (await inbox.stats()).done === 1);
    expect(seen).toHaveLength(1);
    const [id, context] = seen[0]!;
    expect(id).toBe('1421');
    expect(context).toMatchObject({ key: '2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421', attempt: 1 });
    expect(context.receivedAt).toBeGreaterThanOrEqual(before);
  });

  it('a duplicate is answered 200, reaches onDuplicate with its key, and runs no handler again', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox });
    const handler = vi.fn();
    const duplicates: string[] = [];
    webhooks.on('message_sent', handler).onDuplicate((event, { key }) => void duplicates.push(`${event.trigger} ${key}`));
    expect((await webhooks.handle(request(fixture('message_sent')))).status).toBe(200);
    await until(async () => (await inbox.stats()).done === 1);
    // The same message with other spacing: the documented key (the message id) still recognises it.
    const again = await webhooks.handle(request(fixture('message_sent').replace('{', '{ ')));
    expect(again.status).toBe(200);
    await again.done;
    expect(duplicates).toEqual(['message_sent 2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421']);
    await sleep(20);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('503 + Retry-After + onError inbox_failed (with the raw body) when the put fails; the retry is taken', async () => {
    const inner = memoryInbox();
    let failing = true;
    const inbox = withPut(inner, (entry) => (failing ? Promise.reject(new Error('disk full')) : inner.put(entry)));
    const { webhooks, errors } = receiver({ inbox });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    const body = fixture('message_sent');
    const failed = await webhooks.handle(request(body));
    expect(failed.status).toBe(503);
    expect(failed.headers['retry-after']).toBeDefined();
    await failed.done;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'inbox_failed', rawBody: body });
    expect((errors[0]?.event as { trigger: string }).trigger).toBe('message_sent');
    failing = false;
    expect((await webhooks.handle(request(body))).status).toBe(200);
    await until(() => handler.mock.calls.length === 1);
  });

  it('a commit slower than commitTimeoutMs is answered 503 inbox_failed', async () => {
    const { inbox } = gatedInbox();
    const { webhooks, errors } = receiver({ inbox, commitTimeoutMs: 50 });
    const started = Date.now();
    const response = await webhooks.handle(request(fixture('message_sent')));
    expect(response.status).toBe(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await response.done;
    expect(errors.map((e) => e.code)).toEqual(['inbox_failed']);
    expect(errors[0]?.message).toMatch(/in time/);
  });

  it('tells the put when its caller gave up (the signal aborts at commitTimeoutMs); a repeat whose caller gave up is never put', async () => {
    const signals: Array<AbortSignal | undefined> = [];
    const inbox = withPut(memoryInbox(), (_entry, options) => {
      signals.push(options?.signal);
      // Fails long after its caller gave up: the repeat waiting behind it is free to go only then.
      return new Promise<PutResult>((_resolve, reject) => setTimeout(() => reject(new Error('down')), 150));
    });
    const { webhooks } = receiver({ inbox, commitTimeoutMs: 50, consume: false });
    const body = fixture('message_sent');
    const [first, repeat] = await Promise.all([webhooks.handle(request(body)), webhooks.handle(request(body))]);
    expect([first.status, repeat.status]).toEqual([503, 503]);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    await sleep(250);
    // The repeat's caller had given up when the first put failed: its entry reached no inbox.
    expect(signals).toHaveLength(1);
  });

  it('a repeat during a pending commit waits for it: a duplicate only once the first was stored', async () => {
    const { inbox, gates, puts } = gatedInbox();
    const { webhooks } = receiver({ inbox, consume: false });
    const body = fixture('message_sent');
    const first = webhooks.handle(request(body));
    const repeat = webhooks.handle(request(body));
    const answered: number[] = [];
    void first.then((r) => answered.push(r.status));
    void repeat.then((r) => answered.push(r.status));
    await sleep(30);
    expect(answered).toEqual([]); // nobody is answered before the commit
    expect(puts).toHaveLength(1); // the repeat waits instead of asking the inbox
    gates[0]!.open();
    await until(() => gates.length === 2);
    gates[1]!.open();
    expect((await first).status).toBe(200);
    expect((await repeat).status).toBe(200);
    expect(await inbox.stats()).toMatchObject({ pending: 1 });
  });

  it('a repeat during a pending commit that then fails is stored itself, never answered 200 for nothing', async () => {
    const { inbox, gates } = gatedInbox();
    const { webhooks } = receiver({ inbox, consume: false });
    const body = fixture('message_sent');
    const first = webhooks.handle(request(body));
    const repeat = webhooks.handle(request(body));
    await sleep(10);
    gates[0]!.fail(new Error('disk full'));
    expect((await first).status).toBe(503);
    await until(() => gates.length === 2);
    gates[1]!.open();
    expect((await repeat).status).toBe(200);
    expect(await inbox.stats()).toMatchObject({ pending: 1 });
  });

  it('consume: false only receives: stored, no handler runs here', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox, consume: false });
    const handler = vi.fn();
    webhooks.on('message_sent', handler);
    expect((await webhooks.handle(request(fixture('message_sent')))).status).toBe(200);
    await sleep(50);
    expect(handler).not.toHaveBeenCalled();
    expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
  });

  it('an invalid payload is not stored: it goes to onError (200 by default)', async () => {
    const inbox = memoryInbox();
    const { webhooks, errors } = receiver({ inbox, consume: false });
    const response = await webhooks.handle(request('{"trigger":"message_sent","data":{"message":{"id":"1"}}}'));
    expect(response.status).toBe(200);
    await response.done;
    expect(errors.map((e) => e.code)).toEqual(['invalid_payload']);
    expect((await inbox.stats()).pending).toBe(0);
  });

  it('idempotencyKeys overrides a trigger\'s key (after "<appId>:<webhook>:<trigger>:")', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox, consume: false, idempotencyKeys: { message_sent: (event) => `conv-${event.data.message.conversationId}` } });
    await webhooks.handle(request(fixture('message_sent')));
    const [listed] = await inbox.list({ state: 'pending' });
    expect(listed?.key).toMatch(/^2601c4f1a2b3c4d5:wh_chat_events:message_sent:conv-/);
  });
});

describe('the worker: retries, dead events, leases', () => {
  it('a throwing handler is retried with backoff; onError sees each failed attempt with willRetry', async () => {
    const inbox = memoryInbox();
    const { webhooks, errors } = receiver({ inbox, worker: { retry: FAST_RETRY } });
    const attempts: number[] = [];
    webhooks.on('message_sent', (_event, { attempt }) => {
      attempts.push(attempt);
      if (attempt < 3) throw new Error(`flaky ${attempt}`);
    });
    await webhooks.handle(request(fixture('message_sent')));
    await until(async () => (await inbox.stats()).done === 1);
    expect(attempts).toEqual([1, 2, 3]);
    expect(errors.map((e) => [e.code, e.attempt, e.willRetry])).toEqual([
      ['handler_failed', 1, true],
      ['handler_failed', 2, true],
    ]);
    expect(errors[0]?.key).toBe('2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421');
    expect(errors[0]?.rawBody).toBe(fixture('message_sent'));
  });

  it('after the last attempt the event is dead, kept with its error, and retry() brings it back', async () => {
    const inbox = memoryInbox();
    const { webhooks, errors } = receiver({ inbox, worker: { retry: FAST_RETRY } });
    let broken = true;
    const handler = vi.fn(() => {
      if (broken) throw new Error('always');
    });
    webhooks.on('message_sent', handler);
    await webhooks.handle(request(fixture('message_sent')));
    await until(async () => (await inbox.stats()).dead === 1);
    expect(handler).toHaveBeenCalledTimes(3);
    expect(errors.map((e) => e.willRetry)).toEqual([true, true, false]);
    expect((await inbox.list({ state: 'dead' }))[0]?.lastError).toMatch(/always/);
    broken = false;
    expect(await inbox.retry()).toBe(1);
    await until(async () => (await inbox.stats()).done === 1);
    expect(handler).toHaveBeenCalledTimes(4);
  });

  it('a handler that times out counts as failed and is retried', async () => {
    const inbox = memoryInbox();
    const { webhooks, errors } = receiver({ inbox, handlerTimeoutMs: 30, worker: { retry: FAST_RETRY } });
    webhooks.on('message_sent', (_event, { attempt }) => (attempt === 1 ? new Promise(() => {}) : undefined));
    await webhooks.handle(request(fixture('message_sent')));
    await until(async () => (await inbox.stats()).done === 1);
    expect(errors.map((e) => [e.code, e.attempt, e.willRetry])).toEqual([['handler_timeout', 1, true]]);
  });

  it('a lease cut off by a crash: the event runs again once the lease expires, as the next attempt', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox, consume: false });
    await webhooks.handle(request(fixture('message_sent')));
    // A worker that claims the event and dies: its lease is never renewed nor finished.
    expect(await inbox.claim({ leaseMs: 80, waitMs: 0 })).toMatchObject({ attempt: 1 });

    const worker = createWorker({ inbox, leaseMs: 80, retry: FAST_RETRY });
    open.push(worker);
    const attempts: number[] = [];
    worker.on('message_sent', (_event, { attempt }) => void attempts.push(attempt)).start();
    await sleep(40);
    expect(attempts).toEqual([]); // not before the lease ran out
    await until(async () => (await inbox.stats()).done === 1);
    expect(attempts).toEqual([2]);
  });

  it('an interruption on the last attempt makes the event dead and reaches onError (handler_interrupted)', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox, consume: false });
    await webhooks.handle(request(fixture('message_sent')));
    await inbox.claim({ leaseMs: 30, waitMs: 0 });

    const worker = createWorker({ inbox, leaseMs: 30, retry: { attempts: 1 } });
    open.push(worker);
    const handler = vi.fn();
    const errors: WebhookError[] = [];
    worker.on('message_sent', handler).onError((error) => void errors.push(error)).start();
    await until(async () => (await inbox.stats()).dead === 1);
    expect(handler).not.toHaveBeenCalled();
    expect(errors.map((e) => [e.code, e.attempt, e.willRetry])).toEqual([['handler_interrupted', 1, false]]);
  });

  it('a long handler keeps its lease (renewed while it runs) and runs once', async () => {
    const inbox = memoryInbox();
    const { webhooks } = receiver({ inbox, worker: { leaseMs: 40, concurrency: 4 } });
    const handler = vi.fn(() => sleep(200));
    webhooks.on('message_sent', handler);
    await webhooks.handle(request(fixture('message_sent')));
    await until(async () => (await inbox.stats()).done === 1);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('close() stops taking events and waits for the running handler', async () => {
    const inbox = memoryInbox();
    const worker = createWorker({ inbox });
    let finished = false;
    worker.on('message_sent', async () => {
      await sleep(50);
      finished = true;
    });
    worker.start();
    const { webhooks } = receiver({ inbox, consume: false });
    await webhooks.handle(request(fixture('message_sent')));
    await until(async () => (await inbox.stats()).running === 1);
    await worker.close();
    expect(finished).toBe(true);
    await webhooks.handle(request(fixture('message_read_receipt')));
    await sleep(30);
    expect(await inbox.stats()).toMatchObject({ pending: 1, done: 1 });
  });

  it('rejects nonsensical worker options clearly', () => {
    const inbox = memoryInbox();
    expect(() => createWorker({ inbox, concurrency: 0 })).toThrow(/concurrency/);
    expect(() => createWorker({ inbox, retry: { attempts: 0 } })).toThrow(/attempts/);
    expect(() => createWorker({ inbox: {} as Inbox })).toThrow(/inbox/);
    expect(() => createWebhooks({ auth, inbox, commitTimeoutMs: 0 })).toThrow(/commitTimeoutMs/);
  });
});

describe('receive(event): the outcome a queue consumer retries by', () => {
  it('resolves ok, or the failures', async () => {
    const { webhooks } = receiver();
    const event = JSON.parse(fixture('message_sent'));
    webhooks.on('message_sent', (_event, { attempt }) => {
      if (attempt === 2) throw new Error('second time fails');
    });
    expect(await webhooks.receive(event)).toEqual({ ok: true, failures: [] });
    const failed = await webhooks.receive(event, { attempt: 2, key: 'k' });
    expect(failed.ok).toBe(false);
    expect(failed.failures.map((f) => [f.code, f.key])).toEqual([['handler_failed', 'k']]);
  });
});

describe('for queue consumers: the raw body with failures, report(error), reportDuplicate(event, context)', () => {
  it('receive(event, context, rawBody) hands the raw body to onError with a failure', async () => {
    const { webhooks } = receiver();
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    webhooks.on('message_sent', () => {
      throw new Error('fails');
    });
    const raw = fixture('message_sent');
    await webhooks.receive(JSON.parse(raw), { attempt: 3, key: 'k' }, raw);
    expect(errors.map((error) => [error.code, error.key, error.rawBody])).toEqual([['handler_failed', 'k', raw]]);
  });

  it('report(error) reaches every onError handler and resolves once they ran', async () => {
    const { webhooks } = receiver();
    const seen: string[] = [];
    webhooks.onError(async (error) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      seen.push(`slow ${error.code}`);
    });
    webhooks.onError((error) => void seen.push(`quick ${error.code}`));
    await webhooks.report(new WebhookError('invalid_json', 'not a webhook', { rawBody: 'x' }));
    expect(seen).toEqual(['quick invalid_json', 'slow invalid_json']);
  });

  it('reportDuplicate(event, context) runs the onDuplicate handlers, a failing one reported to onError', async () => {
    const { webhooks } = receiver();
    const duplicates: Array<[string, string, number]> = [];
    const errors: string[] = [];
    webhooks.onDuplicate((event, { key, receivedAt }) => void duplicates.push([event.trigger, key, receivedAt]));
    webhooks.onDuplicate(() => {
      throw new Error('onDuplicate broke');
    });
    webhooks.onError((error) => void errors.push(error.message));
    await webhooks.reportDuplicate(JSON.parse(fixture('message_sent')), { key: 'k', receivedAt: 42 });
    expect(duplicates).toEqual([['message_sent', 'k', 42]]);
    expect(errors).toEqual([expect.stringContaining('onDuplicate broke')]);
  });
});
