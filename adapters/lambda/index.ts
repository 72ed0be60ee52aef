/**
 * AWS Lambda adapter: `export const handler = lambdaHandler(webhooks)`. One handler serves API Gateway REST
 * APIs (payload 1.0, also HTTP APIs set to 1.0), HTTP APIs (payload 2.0), function URLs and Application Load
 * Balancer targets; the kind is read from each event, and the result takes the shape that kind expects.
 */
import { ConfigurationError, rejectUnknownOptions } from '../../src/dispatch/index.js';
import { type HandleOptions, type WebhookResponse, type Webhooks, workFinished } from '../../src/receive/index.js';
import { type ParsedWebhook } from '../../src/events/index.js';
import type {
  AlbEvent,
  AlbResult,
  ApiGatewayProxyEvent,
  ApiGatewayProxyEventV2,
  ApiGatewayProxyResult,
  ApiGatewayProxyResultV2,
  LambdaContext,
  LambdaHttpEvent,
  LambdaHttpResult,
} from './shapes.js';
import { kindOf, toRequest, toResult, type Kind } from './translate.js';
import { requireReceiver } from '../shared/receiver-check.js';

export type {
  AlbEvent,
  AlbResult,
  ApiGatewayProxyEvent,
  ApiGatewayProxyEventV2,
  ApiGatewayProxyResult,
  ApiGatewayProxyResultV2,
  LambdaContext,
  LambdaFunctionUrlEvent,
  LambdaHttpEvent,
  LambdaHttpResult,
} from './shapes.js';

export interface LambdaHandlerOptions {
  /**
   * How long the handlers may run before the result is returned (Lambda freezes the function once it has
   * answered). Handlers still running then are reported to onError as `handler_timeout` and the delivery is
   * answered 200 anyway. Default 1500 ms, inside the platform's 2 s delivery timeout; never more than the
   * invocation's remaining time allows.
   */
  timeBudgetMs?: number;
  /**
   * Hand each accepted event to a queue (an SQS send, say) instead of running the handlers in this function.
   * The answer comes once it resolved; a rejection, or no answer within `commitTimeoutMs` or the invocation's
   * remaining time less 300 ms, is answered 503 + Retry-After so the platform retries.
   */
  enqueue?: (event: ParsedWebhook) => Promise<unknown>;
  /** Only requests to this path are deliveries; others are answered 404. A named HTTP API stage prefix is ignored. */
  path?: string;
}

/**
 * What the handler reads of Lambda's context object: @types/aws-lambda's `Context` (which has no index
 * signature, so is not a `LambdaContext`) fits, as does any object with the method or without it.
 */
type InvocationContext = LambdaContext | Pick<LambdaContext, 'getRemainingTimeInMillis'>;

/**
 * One handler for every kind of event, typed per kind: so it can be given where @types/aws-lambda's
 * `APIGatewayProxyHandler`, `APIGatewayProxyHandlerV2` (function URLs too) or `ALBHandler` is expected, and
 * the result of a call has the shape of its event's kind.
 */
export interface LambdaHttpHandler {
  (event: ApiGatewayProxyEventV2, context?: InvocationContext): Promise<ApiGatewayProxyResultV2>;
  (event: AlbEvent, context?: InvocationContext): Promise<AlbResult>;
  (event: ApiGatewayProxyEvent, context?: InvocationContext): Promise<ApiGatewayProxyResult>;
  (event: LambdaHttpEvent, context?: InvocationContext): Promise<LambdaHttpResult>;
}

const DEFAULT_TIME_BUDGET_MS = 1500;
/** Time kept back from the invocation's remaining time for onError reports and returning the result. */
const SAFETY_MARGIN_MS = 300;
/** How much longer than the budget the adapter waits for the receiver's own timeout to settle `done`. */
const GRACE_MS = 100;

/**
 * An AWS Lambda handler for the receiver behind API Gateway (v1 and v2), a function URL or an ALB: the
 * handlers run within `timeBudgetMs` before the answer, or `enqueue` hands each event to a queue.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { lambdaHandler } from 'chat-webhooks/lambda';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', async (event) => console.log(event.data.message.id));
 *
 * export const handler = lambdaHandler(webhooks, { timeBudgetMs: 1500 });
 * ```
 */
export function lambdaHandler(webhooks: Webhooks, options: LambdaHandlerOptions = {}): LambdaHttpHandler {
  requireReceiver('lambdaHandler', "lambdaHandler(webhooks, { path: '/webhooks' })", webhooks);
  rejectUnknownOptions('lambdaHandler', options, Object.keys({ timeBudgetMs: true, enqueue: true, path: true } satisfies Record<keyof LambdaHandlerOptions, true>));
  const { timeBudgetMs = DEFAULT_TIME_BUDGET_MS, enqueue, path } = options;
  if (!(timeBudgetMs > 0 && timeBudgetMs !== Infinity)) {
    throw new ConfigurationError('timeBudgetMs', '`timeBudgetMs` must be a positive number of milliseconds.');
  }

  const settling = new Settling();
  // The result, or a promise of it when the handlers (or a commit) are still running. Not async itself: the
  // state of an async function lives on the heap, and this one has much of it.
  const invoke = (event: LambdaHttpEvent, context: InvocationContext | undefined): LambdaHttpResult | Promise<LambdaHttpResult> => {
    const kind = kindOf(event);
    const request = toRequest(event, kind);
    if (path !== undefined && !request.paths.includes(path)) {
      return toResult(event, kind, { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found.' });
    }
    const remaining = context?.getRemainingTimeInMillis?.();
    const lastMoment = remaining === undefined ? Infinity : Date.now() + remaining - GRACE_MS;
    const handleOptions = timing(remaining, timeBudgetMs, enqueue);
    // `path`, where given, is the route (telemetry's `http.route`).
    if (path !== undefined) handleOptions.route = path;
    // Handlers (or onError reports of a refused request) run after the response is produced; the function is
    // frozen once it returns, so they must finish first. A body in hand is answered within respond(), whose
    // handlers also start there: when they finished too (synchronous handlers), the result is returned at once,
    // and the invocation costs no promise but the handler's own.
    let sent: WebhookResponse | undefined;
    let later: ((response: WebhookResponse) => void) | undefined;
    webhooks.respond(request, (response) => (later ? later(response) : (sent = response)), handleOptions);
    if (sent && workFinished(sent)) return toResult(event, kind, sent);
    // The wait for `done` ends in time for the answer to leave before the invocation does, however late the
    // response came (a commit that took its whole time, then an onError report).
    const limits = { budget: handleOptions.handlerTimeoutMs as number, lastMoment };
    return answerOnce(event, kind, settling, sent, limits, (waiting) => (later = waiting));
  };
  // Exactly two parameters and async: Node 24 runtimes refuse callback-style handlers.
  // The result's shape follows the event's kind (toResult), which the overloads of LambdaHttpHandler state.
  return (async (event: LambdaHttpEvent, context?: InvocationContext) => invoke(event, context)) as LambdaHttpHandler;
}

/**
 * The result once the response has come (`sent`, or later through `expect`) and its work has finished, or
 * the handlers' budget after it came, and never past `lastMoment`. Out of the handler: its closures' variables
 * would otherwise be allocated on every invocation, answered at once or not.
 */
function answerOnce(
  event: LambdaHttpEvent,
  kind: Kind,
  settling: Settling,
  sent: WebhookResponse | undefined,
  { budget, lastMoment }: { budget: number; lastMoment: number },
  expect: (waiting: (response: WebhookResponse) => void) => void,
): Promise<LambdaHttpResult> {
  return new Promise<LambdaHttpResult>((resolve, reject) => {
    const answer = (response: WebhookResponse) => {
      try {
        resolve(toResult(event, kind, response));
      } catch (cause) {
        reject(cause);
      }
    };
    const wait = (response: WebhookResponse) =>
      settling.after(response.done, Math.min(budget + GRACE_MS, lastMoment - Date.now()), () => answer(response));
    if (sent) wait(sent);
    else expect(wait);
  });
}

/**
 * The invocation's handle options. Handlers get the budget; a commit (an inbox's, or `enqueue`'s) is raced
 * against the time left minus the margin, so a hanging queue is answered 503 + Retry-After while Lambda still
 * lets the function answer, instead of a gateway error when Lambda stops it.
 */
function timing(remaining: number | undefined, timeBudgetMs: number, enqueue: LambdaHandlerOptions['enqueue']): HandleOptions {
  const left = remaining === undefined ? Infinity : remaining - SAFETY_MARGIN_MS;
  // At least 1 ms: 0 would mean "no limit" to the receiver.
  const handlerTimeoutMs = Math.max(1, Math.min(timeBudgetMs, left));
  // Each shape whole, as one literal: properties added one by one would make a larger object.
  if (remaining === undefined) return enqueue ? { handlerTimeoutMs, enqueue } : { handlerTimeoutMs };
  const commitTimeoutMs = Math.max(1, left);
  return enqueue ? { handlerTimeoutMs, enqueue, commitTimeoutMs } : { handlerTimeoutMs, commitTimeoutMs };
}

/** How often waiting invocations are checked against their deadlines. */
const TICK_MS = 25;

/**
 * Calls back once `done` settles, or at its deadline (to within TICK_MS) if that comes first. One interval
 * per handler serves every invocation, instead of a timer set and cleared for each. It holds the event loop
 * open only while an invocation waits (so that the receiver's own timeout gets to fire while a handler waits
 * on something that never settles), and stops once a tick finds none waiting.
 */
class Settling {
  readonly #waiting = new Set<{ until: number; then: () => void }>();
  #timer: ReturnType<typeof setInterval> | undefined;

  after(done: Promise<void>, ms: number, then: () => void): void {
    const waiting = { until: Date.now() + ms, then };
    this.#waiting.add(waiting);
    if (this.#timer) this.#timer.ref?.();
    else this.#timer = setInterval(() => this.#expire(), TICK_MS);
    // `done` never rejects. Whichever comes first calls back; the other finds the entry gone.
    done.then(() => {
      if (this.#waiting.delete(waiting)) this.#leave(then);
    });
  }

  #leave(then: () => void): void {
    // An entry just left, and the interval runs while any waits: `#timer` is set.
    if (this.#waiting.size === 0) (this.#timer as ReturnType<typeof setInterval>).unref?.();
    then();
  }

  #expire(): void {
    if (this.#waiting.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    for (const waiting of this.#waiting) {
      if (waiting.until <= now && this.#waiting.delete(waiting)) this.#leave(waiting.then);
    }
  }
}
