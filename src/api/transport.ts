/**
 * One HTTP call to the platform, shared by both clients: URL and query, JSON in and out, the client's
 * headers, a time limit per attempt, the caller's AbortSignal, safe retries (retry.ts), redirects within the
 * base URL's origin only (redirects.ts), answers read with a size cap (read-answer.ts) and `ApiError`s with
 * every secret redacted (errors.ts).
 *
 * Uses the global `fetch` (Node 20, browsers, workers) unless one is injected, so the code runs anywhere.
 */
import type { z } from 'zod';
import { ApiError, type ApiErrorCode, ValidationError, redact, redactAndCut, safeCause } from './errors.js';
import { AnswerTooLarge, DEFAULT_MAX_RESPONSE_BYTES, readCapped } from './read-answer.js';
import { RedirectRefused, fetchWithinOrigin } from './redirects.js';
import { backoffMs } from '../platform/backoff.js';
import { type ApiRetryOptions, parseRetryAfter, retriesFailure, retriesStatus, retryPolicy } from './retry.js';
import { sleep } from '../platform/sleep.js';

/** A query value: arrays repeat the key; `undefined` and `null` leave it out. */
export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>;
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** Cancels the call (and any retry waiting); the call rejects with an `ApiError` of code `aborted`. */
  signal?: AbortSignal;
  /** Extra headers; the client's own (credentials, JSON) cannot be replaced. */
  headers?: Record<string, string>;
}

/** Where the clients report retries and answers: any pino-like logger. Never given a credential. */
export interface ApiLogger {
  debug?(fields: Record<string, unknown>, message?: string): void;
  warn?(fields: Record<string, unknown>, message?: string): void;
}

/** Options every client takes. */
export interface ClientOptions {
  /**
   * A `fetch` to use instead of the global one (a proxy agent, a test double, a recording wrapper). It must
   * honour `redirect: 'manual'`: the client follows redirects itself, within the base URL's origin only.
   */
  fetch?: typeof globalThis.fetch;
  /** Time limit of each attempt, answer body included (ms, default 10 000). */
  timeoutMs?: number;
  /** Retries (default 2): a count, `false`, or `{ retries, minDelayMs, maxDelayMs, maxRetryAfterMs }`. */
  retry?: number | boolean | ApiRetryOptions;
  /**
   * Longest answer body read (bytes, default 10 MiB); a longer one rejects with code `response_too_large`
   * and its connection is closed.
   */
  maxResponseBytes?: number;
  logger?: ApiLogger;
}

export interface TransportConfig extends ClientOptions {
  /** Name used in messages ("createChatClient"). */
  what: string;
  /** Absolute base URL without a trailing slash. */
  baseUrl: string;
  /** Credential headers. Their values are redacted from everything this transport reports. */
  credentials: Record<string, string>;
}

export interface Transport {
  <T = unknown>(method: string, path: string, options?: RequestOptions & { expect?: z.ZodType<T> }): Promise<T>;
}

interface Attempt {
  ok: boolean;
  status?: number;
  value?: unknown;
  error?: ApiError;
  retry?: boolean;
  retryAfterMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Longest text body kept in an error (cut after redaction). */
const MAX_ERROR_TEXT = 2_000;
/** Longest status text, request id and failure message kept in an error (cut after redaction). */
const MAX_SHORT_TEXT = 200;

export function createTransport(config: TransportConfig): Transport {
  // The clients refuse empty credentials at creation (and redact() skips an empty secret anyway).
  const secrets = Object.values(config.credentials);
  const policy = retryPolicy(config.retry, config.what);
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new ValidationError(`${config.what}: timeoutMs must be a positive number of milliseconds.`);
  }
  const maxResponseBytes = config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) {
    throw new ValidationError(`${config.what}: maxResponseBytes must be a positive whole number of bytes.`);
  }
  const fetchImpl = config.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new ValidationError(`${config.what}: no fetch available; pass options.fetch.`);
  const ownHeaders: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json', ...config.credentials };

  return async function request<T>(method: string, path: string, options: RequestOptions & { expect?: z.ZodType<T> } = {}) {
    const verb = method.toUpperCase();
    const url = buildUrl(config.baseUrl, path, options.query, config.what);
    const safeUrl = redact(url, secrets);
    const init: RequestInit = {
      method: verb,
      headers: mergeHeaders(options.headers, ownHeaders),
      // JSON.stringify(undefined) is undefined: no body.
      body: JSON.stringify(options.body),
    };
    const context = { verb, url, safeUrl, init, secrets, timeoutMs, maxResponseBytes, fetchImpl, signal: options.signal, expect: options.expect };
    for (let attempt = 0; ; attempt++) {
      const started = Date.now();
      const outcome = await attemptOnce(context, attempt + 1);
      const status = outcome.ok ? outcome.status : outcome.error!.status;
      config.logger?.debug?.({ method: verb, url: safeUrl, status, attempt: attempt + 1, ms: Date.now() - started }, 'platform call');
      if (outcome.ok) return outcome.value as T;
      const error = outcome.error!;
      // `attempt` counts the calls made before this one: the retry about to wait is number attempt + 1.
      const delay = outcome.retryAfterMs ?? backoffMs(attempt + 1, policy);
      if (!outcome.retry || attempt >= policy.retries || delay > policy.maxRetryAfterMs) throw error;
      config.logger?.warn?.({ method: verb, url: safeUrl, code: error.code, status: error.status, attempt: attempt + 1, delayMs: delay }, 'retrying platform call');
      try {
        await sleep(delay, options.signal);
      } catch (reason) {
        throw new ApiError(`${verb} ${safeUrl} was aborted by the caller`, { code: 'aborted', method: verb, url: safeUrl, attempts: attempt + 1, cause: safeCause(reason, secrets) });
      }
    }
  };
}

interface AttemptContext {
  verb: string;
  url: string;
  safeUrl: string;
  init: RequestInit;
  secrets: string[];
  timeoutMs: number;
  maxResponseBytes: number;
  fetchImpl: typeof globalThis.fetch;
  signal: AbortSignal | undefined;
  expect: z.ZodType | undefined;
}

/**
 * One fetch with its own time limit; the answer body is read within that limit too. One controller carries
 * both the time limit and the caller's signal (AbortSignal.any is missing from Node 20.0-20.2 and some
 * workers).
 */
async function attemptOnce(context: AttemptContext, attempts: number): Promise<Attempt> {
  const { verb, safeUrl, secrets, signal } = context;
  const controller = new AbortController();
  let timedOut = false;
  const timeout = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no answer within ${context.timeoutMs} ms`));
  }, context.timeoutMs);
  const onAbort = () => controller.abort(signal!.reason);
  if (signal?.aborted) onAbort();
  else {
    signal?.addEventListener('abort', onAbort, { once: true });
  }
  try {
    const response = await fetchWithinOrigin(context.fetchImpl, context.url, { ...context.init, signal: controller.signal }, secrets);
    const text = await readCapped(response, context.maxResponseBytes, controller);
    return answer(context, response, text, attempts);
  } catch (cause) {
    if (cause instanceof RedirectRefused || cause instanceof AnswerTooLarge) return { ok: false, error: refusal(context, cause, attempts) };
    const code: ApiErrorCode = signal?.aborted ? 'aborted' : timedOut ? 'timeout' : 'network';
    const message =
      code === 'aborted' ? `${verb} ${safeUrl} was aborted by the caller`
      : code === 'timeout' ? `${verb} ${safeUrl} got no complete answer within ${context.timeoutMs} ms`
      : `${verb} ${safeUrl} failed before an answer arrived: ${redactAndCut(describe(cause), secrets, MAX_SHORT_TEXT)}`;
    const error = new ApiError(message, { code, method: verb, url: safeUrl, attempts, cause: safeCause(cause, secrets) });
    return { ok: false, error, retry: code !== 'aborted' && retriesFailure(verb, cause, timedOut) };
  } finally {
    clearTimeout(timeout);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A redirect not followed or an answer too long: the client's own refusals, never repeated. */
function refusal(context: AttemptContext, cause: RedirectRefused | AnswerTooLarge, attempts: number): ApiError {
  const common = { method: context.verb, url: context.safeUrl, attempts };
  if (cause instanceof RedirectRefused) {
    return new ApiError(`${context.verb} ${context.safeUrl} ${cause.message}`, { ...common, code: 'redirect', status: cause.status });
  }
  const declared = cause.declaredBytes === undefined ? '' : ` (it declared ${cause.declaredBytes})`;
  const message = `${context.verb} ${context.safeUrl} answered with more than maxResponseBytes (${cause.maxBytes} bytes)${declared}; the connection was closed`;
  return new ApiError(message, { ...common, code: 'response_too_large', status: cause.status });
}

/**
 * Turns an answer into a value or an `ApiError`. Everything the service sent is redacted before it is cut
 * or kept (body, status text, request id), so no part of a secret survives a cut.
 */
function answer(context: AttemptContext, response: Response, text: string, attempts: number): Attempt {
  const { verb, safeUrl, secrets } = context;
  const body = parseBody(text, response.headers.get('content-type'), secrets);
  const found = findRequestId(response.headers);
  const requestId = found === undefined ? undefined : redactAndCut(found, secrets, MAX_SHORT_TEXT);
  const common = { method: verb, url: safeUrl, status: response.status, body, attempts, ...(requestId ? { requestId } : {}) };
  if (response.ok) {
    if (typeof body === 'string') {
      return { ok: false, error: new ApiError(`${verb} ${safeUrl} answered ${response.status} with a body that is not JSON`, { ...common, code: 'invalid_response' }) };
    }
    if (!context.expect) return { ok: true, status: response.status, value: body };
    const parsed = context.expect.safeParse(body);
    if (parsed.success) return { ok: true, status: response.status, value: parsed.data };
    const where = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    return { ok: false, error: new ApiError(`${verb} ${safeUrl} answered ${response.status} with an unexpected body (${where})`, { ...common, code: 'invalid_response', issues: parsed.error.issues }) };
  }
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const said = serviceMessage(body);
  const statusText = redactAndCut(response.statusText ?? '', secrets, MAX_SHORT_TEXT);
  const message = `${verb} ${safeUrl} answered ${response.status}${statusText ? ` ${statusText}` : ''}${said ? `: ${said}` : ''}`;
  const error = new ApiError(message, { ...common, code: 'http', retryAfterMs });
  return { ok: false, error, retry: retriesStatus(verb, response.status), retryAfterMs };
}

/**
 * The caller's extra headers, then the client's own, which win whatever the case of the caller's names. A
 * plain object with the spec's spelling (`apiKey`), so an injected fetch sees exactly what the spec shows.
 */
function mergeHeaders(extra: Record<string, string> | undefined, own: Record<string, string>): Record<string, string> {
  const taken = new Set(Object.keys(own).map((name) => name.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(extra ?? {})) if (!taken.has(name.toLowerCase())) headers[name] = value;
  return Object.assign(headers, own);
}

/** `baseUrl + path + ?query`. The path must be relative to the base: an absolute URL would send the key elsewhere. */
function buildUrl(baseUrl: string, path: string, query: Query | undefined, what: string): string {
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) {
    throw new ValidationError(`${what}: a request path starts with one "/" and is relative to the base URL (got ${JSON.stringify(path)}).`);
  }
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const search = params.toString();
  return `${baseUrl}${path}${search ? (path.includes('?') ? '&' : '?') + search : ''}`;
}

/**
 * JSON when it parses (whatever the declared type, case-insensitively), the text otherwise (cut to
 * `MAX_ERROR_TEXT`), undefined when empty; redacted either way.
 */
function parseBody(text: string, contentType: string | null, secrets: readonly string[]): unknown {
  if (text === '') return undefined;
  const looksJson = /json/i.test(contentType ?? '') || /^\s*[[{"]/.test(text);
  if (looksJson) {
    try {
      return redact(JSON.parse(text) as unknown, secrets);
    } catch {
      // Declared JSON but is not: keep the text, the caller decides.
    }
  }
  return redactAndCut(text, secrets, MAX_ERROR_TEXT);
}

function findRequestId(headers: Headers): string | undefined {
  for (const name of ['x-request-id', 'request-id', 'x-amzn-requestid', 'x-correlation-id', 'cf-ray']) {
    const value = headers.get(name);
    if (value) return value;
  }
  return undefined;
}

/** The service's own explanation, when its error body has one in a usual place. */
function serviceMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 200);
  if (body === null || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  // `error.message` reads undefined on a string, a number or null: no need to tell them apart first.
  const text = (record.error as { message?: unknown } | null | undefined)?.message ?? record.message ?? record.error;
  return typeof text === 'string' ? text.slice(0, 200) : undefined;
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return `${cause.message}${inner}`;
}
