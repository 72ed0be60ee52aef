/**
 * The receiver's side of `telemetry` (src/telemetry/hooks.ts): a request with telemetry on carries its
 * `RequestTelemetry` in its handle options, and its answer is reported once sent. None of this runs when
 * `telemetry` is unset: `respond` checks for it once.
 */
import type { RequestTelemetry, Telemetry } from '../../telemetry/hooks.js';
import { readHeader, type WebhookRequest, type WebhookResponse } from '../http.js';

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
