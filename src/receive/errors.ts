import type { z } from 'zod';

/** What went wrong, as a stable machine-readable code. */
export type WebhookErrorCode =
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unauthorized'
  | 'invalid_json'
  | 'invalid_envelope'
  | 'invalid_payload'
  | 'unknown_trigger'
  | 'handler_failed'
  | 'handler_timeout'
  | 'inbox_failed'
  | 'enqueue_failed'
  | 'shutting_down'
  | 'shutdown_abandoned'
  | 'invalid_options';

/** The HTTP status a request failing with this code is answered with. */
const statusOf: Record<WebhookErrorCode, number> = {
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unauthorized: 401,
  invalid_json: 400,
  invalid_envelope: 400,
  invalid_payload: 400,
  unknown_trigger: 200,
  handler_failed: 500,
  handler_timeout: 500,
  inbox_failed: 503,
  enqueue_failed: 503,
  shutting_down: 503,
  shutdown_abandoned: 500,
  invalid_options: 500,
};

export interface WebhookErrorDetails {
  /** zod's issues, with paths from the envelope root (`['data', 'message', 'id']`). */
  issues?: z.core.$ZodIssue[];
  /** The request body exactly as received, so a failed event can be stored and replayed. */
  rawBody?: string | Uint8Array;
  /** The parsed envelope, when parsing got that far. */
  event?: unknown;
  cause?: unknown;
}

/** Every failure the library reports, thrown or handed to `onError`. */
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  readonly code: WebhookErrorCode;
  readonly status: number;
  readonly issues?: z.core.$ZodIssue[];
  readonly rawBody?: string | Uint8Array;
  readonly event?: unknown;

  constructor(code: WebhookErrorCode, message: string, details: WebhookErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = statusOf[code];
    if (details.issues) this.issues = details.issues;
    if (details.rawBody !== undefined) this.rawBody = details.rawBody;
    if (details.event !== undefined) this.event = details.event;
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
