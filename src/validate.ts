/**
 * Validation of a delivery against its trigger's schema. Step one checks the envelope, step two the
 * whole event by trigger, so an issue's path points at the exact field (`data.message.id`).
 */
import { z } from 'zod';
import { openSet } from './records.js';
import { isKnownTrigger, registry, type Trigger } from './registry.js';

/** Longest trigger id accepted; real ids are short snake_case words. */
export const MAX_TRIGGER_LENGTH = 128;

const envelopeFields = {
  appId: z.string().optional(),
  region: z.string().optional(),
  webhook: z.string().optional(),
};

function eventSchema(trigger: Trigger) {
  const definition = registry[trigger];
  return z.object({
    trigger: z.literal(trigger),
    data: definition.data,
    // Only call and meeting events carry `type`; elsewhere an unexpected one is kept, unchecked.
    ...('envelopeType' in definition ? { type: openSet(definition.envelopeType).optional() } : {}),
    ...envelopeFields,
  });
}

const eventSchemas = new Map<string, z.ZodType>();
function schemaOf(trigger: Trigger): z.ZodType {
  let schema = eventSchemas.get(trigger);
  if (!schema) eventSchemas.set(trigger, (schema = eventSchema(trigger)));
  return schema;
}

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

/** Issues of a known trigger's event, or undefined when it is valid. */
export function eventIssues(event: { trigger: string }): z.core.$ZodIssue[] | undefined {
  if (!isKnownTrigger(event.trigger)) return undefined;
  const result = schemaOf(event.trigger).safeParse(event);
  return result.success ? undefined : result.error.issues;
}
