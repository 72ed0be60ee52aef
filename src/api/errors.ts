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
  | 'invalid_response'
  /**
   * The service redirected the call to another origin (credentials are never sent there), redirected more
   * than 5 times, or a redirect the runtime does not let the client see (a browser's opaque redirect).
   */
  | 'redirect'
  /** The answer was longer than `maxResponseBytes`; the connection was closed without reading the rest. */
  | 'response_too_large'
  /** `users.iterate`/`each` did not end: a page or page number came back, or more than `maxPages` pages. */
  | 'pagination_loop';

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
    // Declared fields are own properties under ES2022 whether given or not, so these need no guard.
    this.body = details.body;
    this.requestId = details.requestId;
    this.attempts = details.attempts ?? 1;
    this.retryAfterMs = details.retryAfterMs;
    this.issues = details.issues;
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

/**
 * Returns `value` with every occurrence of a secret replaced, in strings, arrays and plain objects. A secret
 * is also looked for as a URL component and as a JSON string escapes it (a service may echo it either way);
 * a secret that contains another is never left half replaced (see `redactText`).
 */
export function redact<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  return redactWith(value, spellings(secrets));
}

function redactWith<T>(value: T, spelled: readonly string[]): T {
  if (typeof value === 'string') return redactText(value, spelled) as T;
  if (Array.isArray(value)) return value.map((item) => redactWith(item, spelled)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[redactWith(key, spelled)] = redactWith(item, spelled);
    return copy as T;
  }
  return value;
}

/**
 * Every place any secret occurs is found in the original text first (overlaps included), and each run of
 * covered characters becomes one `[redacted]`: replacing one secret after another could let two adjacent
 * secrets form a false match across their boundary and leave a piece of each.
 */
function redactText(text: string, spelled: readonly string[]): string {
  const spans: Array<[number, number]> = [];
  for (const secret of spelled) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) spans.push([at, at + secret.length]);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let kept = 0;
  let end = -1;
  for (const [start, stop] of spans) {
    if (start > end) {
      if (end >= 0) out += REDACTED;
      out += text.slice(kept, start);
    }
    end = Math.max(end, stop);
    kept = end;
  }
  return out + REDACTED + text.slice(kept);
}

function spellings(secrets: readonly string[]): string[] {
  const all = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    all.add(secret);
    all.add(JSON.stringify(secret).slice(1, -1));
    try {
      all.add(encodeURIComponent(secret));
    } catch {
      // A lone surrogate has no URL form: no service can echo it as one.
    }
  }
  // Order does not matter: redactText finds every occurrence of every spelling before it replaces any.
  return [...all];
}

/**
 * What the service sent (a status text, a text body, a header), made safe to keep: redacted first, then cut
 * to `max` characters. In that order no secret can straddle the cut, so no prefix of one is left behind.
 */
export function redactAndCut(text: string, secrets: readonly string[], max: number): string {
  const clean = redact(text, secrets);
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/**
 * A cause safe to attach: the original error when no secret shows anywhere in it (message, stack, own
 * properties, nested causes), otherwise a plain Error carrying the redacted message: a custom `fetch` may
 * well put a request header into its own error.
 */
export function safeCause(cause: unknown, secrets: readonly string[]): unknown {
  if (!(cause instanceof Error)) return typeof cause === 'string' ? redact(cause, secrets) : undefined;
  if (!mentionsSecret(cause, spellings(secrets), 0)) return cause;
  const clean = new Error(redact(cause.message, secrets));
  clean.name = cause.name;
  return clean;
}

function mentionsSecret(value: unknown, secrets: readonly string[], depth: number): boolean {
  // null and undefined read as "null" and "": a secret found there only makes the cause replaced, never kept.
  if (depth > 4) return false;
  let text: string;
  if (value instanceof Error) {
    const own: Record<string, unknown> = {};
    for (const key of Object.keys(value)) own[key] = (value as unknown as Record<string, unknown>)[key];
    text = `${value.message}\n${value.stack ?? ''}\n${safeStringify(own)}`;
    if (mentionsSecret(value.cause, secrets, depth + 1)) return true;
  } else {
    // A string too: its JSON form holds each secret's JSON-escaped spelling, which `spellings` includes.
    text = safeStringify(value);
  }
  return secrets.some((secret) => text.includes(secret));
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
