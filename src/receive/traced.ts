/**
 * The receiver's side of `telemetry` (src/telemetry/hooks.ts): a request with telemetry on carries its
 * `RequestTelemetry` in its handle options, and its answer is reported once sent. None of this runs when
 * `telemetry` is unset: `respond` checks for it once.
 */
import { sha256 } from '#platform';
import type { ParsedWebhook } from '../events/index.js';
import type { AttemptInfo, RequestTelemetry, Telemetry } from '../telemetry/hooks.js';
import { ConfigurationError } from './errors.js';
import { readHeader, type WebhookRequest, type WebhookResponse } from './http.js';

/** A refusal's answer: it says which WebhookError refused the request (for `error.type`). */
export interface Refusal extends WebhookResponse {
  readonly code?: string;
}

/** The request's telemetry started, with the `send` that reports the answer. */
export function traced<Options extends { readonly route?: string }>(
  telemetry: Telemetry,
  request: WebhookRequest,
  send: (response: WebhookResponse) => void,
  options: Options,
): { send: (response: WebhookResponse) => void; options: Options & { readonly trace: RequestTelemetry } } {
  const trace = telemetry.request(request.method, (name) => readHeader(request.headers, name), options.route);
  return {
    options: { ...options, trace },
    send: (response) => {
      try {
        send(response);
      } finally {
        trace.answered(response.status, (response as Refusal).code);
      }
    },
  };
}

/** A digest for telemetry (96 bits of SHA-256, hex): an idempotency key or a conversation id can hold user ids. */
export function digest(text: string): string {
  let hex = '';
  for (const byte of sha256(text).subarray(0, 12)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** One attempt at an event's handlers, as telemetry is told of it: the key only as its digest. */
export function attemptInfo(event: ParsedWebhook, trigger: string, key: string, attempt: number, traceparent: string | undefined): AttemptInfo {
  return { event, trigger, attempt, traceparent, keyDigest: () => digest(key), digest };
}

/** Telemetry is an object with the hooks of src/telemetry/hooks.ts (`openTelemetry()` makes one). */
export function checkTelemetry(telemetry: Telemetry | undefined): Telemetry | undefined {
  if (telemetry !== undefined && (telemetry === null || typeof telemetry.request !== 'function' || typeof telemetry.attempt !== 'function')) {
    throw new ConfigurationError('telemetry', "`telemetry` must be openTelemetry() from 'chat-webhooks/otel' (or an object with its hooks).");
  }
  return telemetry;
}
