/**
 * The two errors of `chat-webhooks/api`: `ApiError` for a call that did not succeed, `ValidationError` for a
 * value refused before anything was sent.
 *
 * Credentials never reach either. The client hands the transport its secrets (API key, management key and
 * secret) and every text that goes into an error (message, URL, body, request id, cause) passes through
 * `redact` first, because a service may echo a key back in an error body. `toJSON` lists the fields on
 * purpose, so `JSON.stringify(error)` shows what a log needs and nothing else.
 */
import type { z } from 'zod';

/** What kind of failure an `ApiError` is. */
export type ApiErrorCode =
  /** The service answered with a status outside 2xx. */
  | 'http'
  /** The request could not be sent or its answer not read (DNS, refused or reset connection). */
  | 'network'
  /** No complete answer within `timeoutMs`. */
  | 'timeout'
  /** The caller's `AbortSignal` fired. */
  | 'aborted'
  /** A 2xx answer whose body is not the JSON the call expects. */
  | 'invalid_response';

export interface ApiErrorDetails {
  code: ApiErrorCode;
  method: string;
  /** The request URL, without credentials. */
  url: string;
  /** HTTP status; 0 when no answer arrived. */
  status?: number;
  /** The answer's body: parsed when it is JSON, the text otherwise. */
  body?: unknown;
  requestId?: string;
  /** How many attempts were made, retries included. */
  attempts?: number;
  /** The delay the service asked for in `Retry-After`, when it asked for one. */
  retryAfterMs?: number;
  /** zod's issues when a 2xx body did not have the expected shape. */
  issues?: z.core.$ZodIssue[];
  cause?: unknown;
}

/** A call to the platform that did not succeed. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
  readonly requestId?: string;
  readonly attempts: number;
  readonly retryAfterMs?: number;
  readonly issues?: z.core.$ZodIssue[];

  constructor(message: string, details: ApiErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.status = details.status ?? 0;
    this.method = details.method;
    this.url = details.url;
    if (details.body !== undefined) this.body = details.body;
    if (details.requestId !== undefined) this.requestId = details.requestId;
    this.attempts = details.attempts ?? 1;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.issues !== undefined) this.issues = details.issues;
  }

  toJSON(): Record<string, unknown> {
    const { name, message, code, status, method, url, body, requestId, attempts, retryAfterMs } = this;
    return { name, message, code, status, method, url, body, requestId, attempts, retryAfterMs };
  }
}

/** A value refused by one of the `chat-webhooks/api` schemas (or options refused at creation). */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  /** zod's issues, each with its path (`['formFields', 0, 'elementId']`). */
  readonly issues: z.core.$ZodIssue[];

  constructor(message: string, issues: z.core.$ZodIssue[] = []) {
    super(message);
    this.issues = issues;
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, issues: this.issues };
  }
}

/** `what: path: message; path: message` from zod's issues, without echoing any input value. */
export function validationError(what: string, error: z.ZodError): ValidationError {
  const lines = error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  return new ValidationError(`${what}: ${lines.join('; ')}`, error.issues);
}

const REDACTED = '[redacted]';

/** Returns `value` with every occurrence of a secret replaced, in strings, arrays and plain objects. */
export function redact<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') {
    let text: string = value;
    for (const secret of secrets) if (secret) text = text.split(secret).join(REDACTED);
    return text as T;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[redact(key, secrets)] = redact(item, secrets);
    return copy as T;
  }
  return value;
}

/**
 * A cause safe to attach: the original error when no secret shows anywhere in it (message, stack, own
 * properties, nested causes), otherwise a plain Error carrying the redacted message: a custom `fetch` may
 * well put a request header into its own error.
 */
export function safeCause(cause: unknown, secrets: readonly string[]): unknown {
  if (!(cause instanceof Error)) return typeof cause === 'string' ? redact(cause, secrets) : undefined;
  if (!mentionsSecret(cause, secrets, 0)) return cause;
  const clean = new Error(redact(cause.message, secrets));
  clean.name = cause.name;
  return clean;
}

function mentionsSecret(value: unknown, secrets: readonly string[], depth: number): boolean {
  if (depth > 4 || value === null || value === undefined) return false;
  let text: string;
  if (value instanceof Error) {
    const own: Record<string, unknown> = {};
    for (const key of Object.keys(value)) own[key] = (value as unknown as Record<string, unknown>)[key];
    text = `${value.message}\n${value.stack ?? ''}\n${safeStringify(own)}`;
    if (mentionsSecret(value.cause, secrets, depth + 1)) return true;
  } else {
    text = typeof value === 'string' ? value : safeStringify(value);
  }
  return secrets.some((secret) => secret !== '' && text.includes(secret));
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
