/**
 * Validation of a delivery against its trigger's schema. Step one checks the envelope, step two the
 * whole event by trigger, so an issue's path points at the exact field (`data.message.id`).
 */
import type { z } from 'zod';
import { validators } from '../../events/generated/validators.js';
import type { Trigger } from '../../events/index.js';
import { explainerNow } from './explainer.js';

/** Longest trigger id accepted; real ids are short snake_case words. */
export const MAX_TRIGGER_LENGTH = 128;

const known = new Map<string, (value: unknown) => boolean>(Object.entries(validators));

export type EnvelopeProblem = string | undefined;

/** Why a value is not a webhook envelope (an object with a string `trigger` and an object `data`), if it is not. */
export function envelopeProblem(value: unknown): EnvelopeProblem {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the body must be a JSON object with `trigger` and `data`';
  }
  const { trigger, data } = value as { trigger?: unknown; data?: unknown };
  if (typeof trigger !== 'string') return '`trigger` must be a string';
  if (trigger.length === 0 || trigger.length > MAX_TRIGGER_LENGTH) {
    return `\`trigger\` must be 1 to ${MAX_TRIGGER_LENGTH} characters long`;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return '`data` must be an object';
  return undefined;
}

/** The issues of a rejected event cannot be told yet: zod's side is loading (explainer.ts). */
export const UNEXPLAINED = 'unexplained';

/** Issues of a known trigger's event, or undefined when it is valid. */
export function eventIssues(event: { trigger: string }): z.core.$ZodIssue[] | undefined | typeof UNEXPLAINED {
  // Generated at build time from the trigger's schema (answering exactly as its `safeParse(…).success`,
  // test/receive/compile.test.ts): no schema is built and nothing compiled to accept an event.
  const valid = known.get(event.trigger);
  if (!valid || valid(event)) return undefined;
  // zod stays the authority: it explains the rejection (its first few issues), and its verdict wins should
  // the two ever disagree.
  const explain = explainerNow();
  return explain ? explain(event.trigger as Trigger, event) : UNEXPLAINED;
}
