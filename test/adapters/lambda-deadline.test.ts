/**
 * Lambda answers before Lambda stops it (issue 23, item 8): a commit (an `enqueue`, or an inbox's put) that
 * hangs is answered 503 + Retry-After within the invocation's remaining time, not after `commitTimeoutMs`
 * (2 s) when Lambda has long since stopped the function and the platform got a gateway error instead.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { lambdaHandler, type LambdaHttpEvent } from '../../adapters/lambda/index.js';
import { createWebhooks, memoryInbox, type Inbox, type WebhookError } from '../../src/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, lambdaContext, restApiEvent, type EventInput } from './lambda-events.js';
import { AUTH, PASSWORD, USER, fixture } from './status-table.js';

const delivery: EventInput = { method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') };
const kinds: Record<string, LambdaHttpEvent> = {
  'REST API (payload 1.0)': restApiEvent(delivery),
  'HTTP API (payload 2.0)': httpApiEvent(delivery),
  'function URL': functionUrlEvent(delivery),
  'ALB (multi-value headers)': albEvent(delivery, true),
};
const never = () => new Promise<never>(() => undefined);

function receiver(options: { inbox?: Inbox; commitTimeoutMs?: number; hangingOnError?: boolean } = {}) {
  const { inbox, commitTimeoutMs, hangingOnError } = options;
  const webhooks = createWebhooks({ auth: { username: USER, password: PASSWORD }, logger: {}, ...(inbox ? { inbox, consume: false } : {}), ...(commitTimeoutMs ? { commitTimeoutMs } : {}) });
  const errors: WebhookError[] = [];
  webhooks.onError((error) => {
    errors.push(error);
    return hangingOnError ? never() : undefined;
  });
  return { webhooks, errors };
}

/** Invokes with `remainingMs` left; resolves the result and how long the answer took. */
async function timed(handler: ReturnType<typeof lambdaHandler>, event: LambdaHttpEvent, remainingMs: number) {
  const started = performance.now();
  const result = await handler(event, lambdaContext(remainingMs));
  return { result, ms: performance.now() - started };
}

describe('lambda: a commit is raced against the invocation remaining time', () => {
  it.each(Object.entries(kinds))('%s: enqueue hangs, 800 ms left: 503 + Retry-After before 850 ms', async (_kind, event) => {
    const { webhooks, errors } = receiver();
    const { result, ms } = await timed(lambdaHandler(webhooks, { enqueue: never }), event, 800);
    expect(result.statusCode).toBe(503);
    const headers = result.headers ?? Object.fromEntries(Object.entries((result as { multiValueHeaders: Record<string, string[]> }).multiValueHeaders).map(([k, v]) => [k, v.join()]));
    expect(headers['retry-after']).toBe('5');
    expect(ms).toBeLessThan(850);
    // It did wait for the queue while there was time to (800 - the 300 ms margin).
    expect(ms).toBeGreaterThan(450);
    expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
    expect(errors[0]?.rawBody).toBe(fixture('message_sent'));
  });

  it('an inbox whose put hangs, 800 ms left: 503 before 850 ms', async () => {
    const inbox: Inbox = Object.assign(memoryInbox(), { put: never });
    const { webhooks, errors } = receiver({ inbox });
    const { result, ms } = await timed(lambdaHandler(webhooks), httpApiEvent(delivery), 800);
    expect(result.statusCode).toBe(503);
    expect(ms).toBeLessThan(850);
    expect(errors.map((error) => error.code)).toEqual(['inbox_failed']);
  });

  it('an onError handler that hangs too does not hold the answer past the remaining time', async () => {
    const { webhooks, errors } = receiver({ hangingOnError: true });
    const { result, ms } = await timed(lambdaHandler(webhooks, { enqueue: never }), restApiEvent(delivery), 800);
    expect(result.statusCode).toBe(503);
    expect(ms).toBeLessThan(850);
    expect(errors).toHaveLength(1);
  });

  it('a slow queue that answers within the time left is answered 200', async () => {
    const { webhooks, errors } = receiver();
    const enqueue = () => new Promise((resolve) => setTimeout(resolve, 200));
    const { result } = await timed(lambdaHandler(webhooks, { enqueue }), functionUrlEvent(delivery), 800);
    expect(result.statusCode).toBe(200);
    expect(errors).toEqual([]);
  });

  it('with time to spare, commitTimeoutMs still decides', async () => {
    const { webhooks } = receiver({ commitTimeoutMs: 150 });
    const { result, ms } = await timed(lambdaHandler(webhooks, { enqueue: never }), httpApiEvent(delivery), 30_000);
    expect(result.statusCode).toBe(503);
    expect(ms).toBeGreaterThanOrEqual(140);
    expect(ms).toBeLessThan(1000);
  });
});
