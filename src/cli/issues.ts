/** Validation as the CLI shows it: the receiver's own verdict, one path-precise line per issue. */
// The CLI explains every invalid payload it is shown: zod's side is loaded up front (chat-webhooks/schemas).
import '../receive/schemas.js';
import { isKnownTrigger, safeParseWebhook, type WebhookError } from '../index.js';

export interface Issue {
  /** Dotted path from the envelope root (`data.message.id`), or `(root)`. */
  path: string;
  message: string;
}

export function issuesOf(error: WebhookError): Issue[] {
  if (!error.issues || error.issues.length === 0) return [{ path: '(root)', message: error.message }];
  return error.issues.map((issue) => ({
    path: issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

type EventRecord = Record<string, unknown> & { trigger: string };

export type Verdict =
  | { valid: true; known: boolean; trigger: string; event: EventRecord }
  | { valid: false; code: string; trigger?: string; event?: EventRecord; issues: Issue[] };

/** Validates a body exactly as the receiver does (the package's own parser). */
export function verdictOf(body: string | object): Verdict {
  const result = safeParseWebhook(body);
  if (result.success) {
    const event = result.event as EventRecord;
    return { valid: true, known: isKnownTrigger(event.trigger), trigger: event.trigger, event };
  }
  const event = result.error.event as EventRecord | undefined;
  return {
    valid: false,
    code: result.error.code,
    ...(event ? { trigger: event.trigger, event } : {}),
    issues: issuesOf(result.error),
  };
}

export const formatIssue = (issue: Issue) => `${issue.path}: ${issue.message}`;
