/**
 * Storing before answering (src/receive/intake/commit.ts): a repeat waits for the first put of its key, and the
 * commit timeout bounds the wait (found by mutation testing, tools/mutation/results.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createWebhooks, memoryInbox, type WebhookError } from '../../src/index.js';
import type { Inbox, InboxEntry, PutResult } from '../../src/delivery/port.js';
import { buildRequest } from '../../src/testing/index.js';

const auth = { username: 'platform', password: 's3cret' };
const body = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const request = (text: string) => buildRequest(text, { auth });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The memory inbox with its put replaced. */
function withPut(put: (inner: Inbox, entry: InboxEntry) => Promise<PutResult>): Inbox {
  const inner = memoryInbox();
  return new Proxy(inner, {
    get: (target, name) => {
      if (name === 'put') return (entry: InboxEntry) => put(target, entry);
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('commits', () => {
  it('a repeat arriving while the first put of its key is in flight waits for it, then asks the inbox', async () => {
    const log: string[] = [];
    let calls = 0;
    const inbox = withPut(async (inner, entry) => {
      const call = ++calls;
      log.push(`start ${call}`);
      await sleep(20);
      log.push(`end ${call}`);
      if (call === 1) throw new Error('first put failed');
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false });
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const [first, second] = await Promise.all([webhooks.handle(request(body)), webhooks.handle(request(body))]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    expect(first.status).toBe(503);
    // The first failed: the repeat is stored now, not taken for a duplicate.
    expect(second.status).toBe(200);
    expect((await inbox.stats()).pending).toBe(1);
    await first.done;
    expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
  });

  it('a repeat of a stored key waiting on the first is a duplicate; other keys do not wait', async () => {
    const log: string[] = [];
    const inbox = withPut(async (inner, entry) => {
      log.push(`start ${entry.trigger}`);
      await sleep(15);
      log.push(`end ${entry.trigger}`);
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false });
    const duplicates: string[] = [];
    webhooks.onDuplicate((event) => void duplicates.push(event.trigger));
    const other = JSON.stringify({ trigger: 'poll_voted', data: {} });
    const answers = await Promise.all([webhooks.handle(request(body)), webhooks.handle(request(other)), webhooks.handle(request(body))]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(log.slice(0, 2)).toEqual(['start message_sent', 'start poll_voted']);
    await Promise.all(answers.map((answer) => answer.done));
    expect(duplicates).toEqual(['message_sent']);
    // Once settled, the key is asked of the inbox directly again.
    const later = await webhooks.handle(request(body));
    expect(later.status).toBe(200);
    await later.done;
    expect(duplicates).toEqual(['message_sent', 'message_sent']);
  });

  it('a third repeat waits for the second put, not just the first: the chain is kept while puts overlap', async () => {
    const log: string[] = [];
    const releases: Array<() => void> = [];
    let calls = 0;
    const inbox = withPut(async (inner, entry) => {
      const call = ++calls;
      log.push(`start ${call}`);
      await new Promise<void>((resolve) => releases.push(resolve));
      log.push(`end ${call}`);
      // Each put fails but the last, so that every repeat asks the inbox itself.
      if (call < 3) throw new Error(`put ${call} failed`);
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false, commitTimeoutMs: Infinity });
    const first = webhooks.handle(request(body));
    const second = webhooks.handle(request(body));
    await sleep(5);
    expect(log).toEqual(['start 1']);
    releases[0]?.();
    await sleep(5);
    expect(log).toEqual(['start 1', 'end 1', 'start 2']);
    // The first put's bookkeeping has settled; a third repeat must still wait for the second.
    const third = webhooks.handle(request(body));
    await sleep(5);
    expect(log).toEqual(['start 1', 'end 1', 'start 2']);
    releases[1]?.();
    await sleep(5);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3']);
    releases[2]?.();
    expect((await Promise.all([first, second, third])).map((answer) => answer.status)).toEqual([503, 503, 200]);
  });

  it('once its put settled, a key is forgotten: a later delivery of it goes to the inbox at once', async () => {
    // The in-flight map must drop a key when its put settles; were it kept (a leak, one entry per key ever
    // seen), every later put of the key would be chained behind the settled one and start a turn later.
    let puts = 0;
    const inbox = withPut((inner, entry) => {
      puts += 1;
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false });
    const other = JSON.stringify({ trigger: 'poll_voted', data: {} });
    for (const [round, text] of [body, other, body, other, body].entries()) {
      const answer = webhooks.handle(request(text));
      // handle() reads an in-memory body synchronously, so a key not in flight reaches the inbox right away.
      expect(puts).toBe(round + 1);
      expect((await answer).status).toBe(200);
      await (await answer).done;
    }
  });

  it('commitTimeoutMs: Infinity waits for a slow inbox', async () => {
    const inbox = withPut(async (inner, entry) => {
      await sleep(20);
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false, commitTimeoutMs: Infinity });
    expect((await webhooks.handle(request(body))).status).toBe(200);
  });

  it('a put that fails before the commit timeout is answered at once with its own error', async () => {
    const inbox = withPut(async () => {
      throw new Error('refused');
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false, commitTimeoutMs: 1000 });
    const errors: WebhookError[] = [];
    webhooks.onError((error) => void errors.push(error));
    const started = Date.now();
    const response = await webhooks.handle(request(body));
    expect(response.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(500);
    await response.done;
    expect((errors[0]?.cause as Error).message).toBe('refused');
  });

  it('a put that succeeds before the commit timeout is answered 200', async () => {
    const inbox = withPut(async (inner, entry) => {
      await sleep(5);
      return inner.put(entry);
    });
    const webhooks = createWebhooks({ auth, logger: {}, inbox, consume: false, commitTimeoutMs: 1000 });
    expect((await webhooks.handle(request(body))).status).toBe(200);
  });
});
