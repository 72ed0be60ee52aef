import type { z } from 'zod';

/**
 * What went wrong with a delivery, as a stable machine-readable code. Refusals carry the status the request
 * was answered with; failures after the 200 (`handler_failed`, `handler_timeout`, `handler_interrupted`, `shutdown_abandoned`) have
 * none: the sender was already told OK.
 */
export type WebhookErrorCode =
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unauthorized'
  | 'app_mismatch'
  | 'body_timeout'
  | 'body_unavailable'
  | 'invalid_json'
  | 'invalid_envelope'
  | 'invalid_payload'
  | 'inbox_failed'
  | 'enqueue_failed'
  | 'handler_failed'
  | 'handler_timeout'
  | 'handler_interrupted'
  | 'shutdown_abandoned'
  | 'catch_up_failed';

/** The HTTP status a request refused with this code is answered with; none for failures after the 200. */
const statusOf: Readonly<Record<WebhookErrorCode, number | undefined>> = {
  payload_too_large: 413,
  unsupported_media_type: 415,
  unauthorized: 401,
  // Right credentials, bound to apps, delivering another app's event (or one without appId).
  app_mismatch: 403,
  body_timeout: 408,
  // The app, not the sender: a middleware consumed the body and kept nothing of it. 500, so that the platform
  // delivers it again (a 400 it would not resend, and the event would be lost).
  body_unavailable: 500,
  invalid_json: 400,
  invalid_envelope: 400,
  // Answered 400 with `invalidPayload: 'reject'`; with the default 'accept', 200 and then onError.
  invalid_payload: 400,
  inbox_failed: 503,
  enqueue_failed: 503,
  handler_failed: undefined,
  handler_timeout: undefined,
  handler_interrupted: undefined,
  shutdown_abandoned: undefined,
  // A catch-up run (createWebhooks({ catchUp })) that stopped on an error: no request was answered by it.
  catch_up_failed: undefined,
};

export interface WebhookErrorDetails {
  /** zod's issues, with paths from the envelope root (`['data', 'message', 'id']`). */
  issues?: z.core.$ZodIssue[];
  /** The request body exactly as received, so a failed event can be stored and replayed. */
  rawBody?: string | Uint8Array;
  /** The parsed envelope, when parsing got that far. */
  event?: unknown;
  cause?: unknown;
  /** The event's idempotency key, for failures of a stored event. */
  key?: string;
  /** For handler failures in a worker or a queue consumer (`sqsHandler`): which attempt failed (1 is the first run). */
  attempt?: number;
  /** For handler failures in a worker: whether the event will be tried again (false: it is dead). */
  willRetry?: boolean;
  /**
   * The status the request was answered with, where it is not the code's own: 200 for an `invalid_payload`
   * accepted (`invalidPayload: 'accept'`, the default).
   */
  status?: number;
}

/**
 * A delivery that was refused, or whose handling failed after it was acknowledged: what `onError` gets and
 * what `parseWebhook` throws. The sender's doing or a handler's; never a mistake in the options (those throw
 * a `ConfigurationError` when the receiver is created).
 */
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  readonly code: WebhookErrorCode;
  /** The status the request was answered with (200 for an accepted `invalid_payload`); undefined for failures after the 200. */
  readonly status: number | undefined;
  readonly issues?: z.core.$ZodIssue[];
  readonly rawBody?: string | Uint8Array;
  readonly event?: unknown;
  readonly key?: string;
  readonly attempt?: number;
  readonly willRetry?: boolean;

  constructor(code: WebhookErrorCode, message: string, details: WebhookErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status ?? statusOf[code];
    // The fields are declared, so each is an own property whether given or not (undefined then).
    this.issues = details.issues;
    this.rawBody = details.rawBody;
    this.event = details.event;
    this.key = details.key;
    this.attempt = details.attempt;
    this.willRetry = details.willRetry;
  }
}

/** The same failure, its request answered with `status` instead (an invalid payload accepted: 200). */
export function answeredWith(error: WebhookError, status: number): WebhookError {
  const { issues, rawBody, event, cause, key, attempt, willRetry } = error;
  return new WebhookError(error.code, error.message, { issues, rawBody, event, cause, key, attempt, willRetry, status });
}

/**
 * A mistake in how the library is set up (an option out of range, an unknown trigger name given to `on`),
 * thrown at the call that made it, for the developer to fix; never about a delivery.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  /** The option or argument at fault (`maxBodyBytes`, `auth.username`, `auth[1].password`, `trigger`). */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

/**
 * A failure's text for a message or log line, whatever was thrown: handlers may throw values `String()`
 * cannot convert (`Object.create(null)`, an object whose `toString` throws or is not a function), and a
 * failure while describing a failure must never escape as an unhandled rejection.
 */
export function describeCause(cause: unknown): string {
  try {
    return cause instanceof Error ? String(cause.message) : String(cause);
  } catch {
    try {
      return Object.prototype.toString.call(cause);
    } catch {
      return 'a value that cannot be described';
    }
  }
}
