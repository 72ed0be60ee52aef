/**
 * One delivery as the platform makes it: a POST with `Content-Type: Application/json` (its capital A
 * included) and, when credentials are given, Basic auth. Measures the time to the full answer.
 */
import { performance } from 'node:perf_hooks';
import { basicAuthHeader } from '../testing/index.js';
import { usageError } from './errors.js';

export interface Credentials {
  username: string;
  password: string;
}

export interface DeliveryResult {
  /** The HTTP status, or undefined when no answer came (refused connection, timeout). */
  status?: number;
  /** Milliseconds from sending to the end of the answer's body. */
  ms: number;
  /** The answer's body, cut to 200 characters, for a failed request. */
  answer?: string;
  /** Why no answer came. */
  error?: string;
}

export interface DeliveryTarget {
  url: string;
  auth?: Credentials | undefined;
  /** Headers to send instead of the platform's defaults (a forwarded delivery's own). */
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Headers the platform sends with a delivery. */
export function platformHeaders(auth?: Credentials): Record<string, string> {
  return {
    'Content-Type': 'Application/json',
    ...(auth ? { Authorization: basicAuthHeader(auth.username, auth.password) } : {}),
  };
}

function reason(cause: unknown): string {
  const error = cause as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (error.name === 'TimeoutError') return 'no answer in time';
  return error.cause?.code ?? error.cause?.message ?? error.message ?? String(cause);
}

export async function deliver(body: string | Uint8Array<ArrayBuffer>, target: DeliveryTarget): Promise<DeliveryResult> {
  const started = performance.now();
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: target.headers ?? platformHeaders(target.auth),
      body,
      signal: AbortSignal.timeout(target.timeoutMs ?? 30_000),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    return response.ok ? { status: response.status, ms } : { status: response.status, ms, answer: text.slice(0, 200) };
  } catch (cause) {
    return { ms: performance.now() - started, error: reason(cause) };
  }
}

/** Credentials from `--user`/`--password`: both or neither. */
export function credentialsFrom(options: { user?: string; password?: string }): Credentials | undefined {
  if (options.user === undefined && options.password === undefined) return undefined;
  if (options.user === undefined || options.password === undefined) {
    throw usageError('Give both --user and --password (or CHAT_WEBHOOKS_USER and CHAT_WEBHOOKS_PASSWORD), or neither.');
  }
  return { username: options.user, password: options.password };
}
