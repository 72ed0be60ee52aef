/**
 * Validation of a delivery against its trigger's schema. Step one checks the envelope, step two the
 * whole event by trigger, so an issue's path points at the exact field (`data.message.id`).
 */
import { z } from 'zod';
import { compileValidator, type Validator } from '../../compile/index.js';
import { explainRejection } from './explain.js';
export { MAX_REPORTED_ISSUES } from './explain.js';
import { openSet } from '../../events/records.js';
import { isKnownTrigger, registry, type Trigger } from '../../events/index.js';

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

interface CompiledEvent {
  schema: z.ZodType;
  /** Answers exactly as `schema.safeParse(…).success` (test/compile.test.ts), without building zod's output. */
  valid: Validator;
}

const compiled = new Map<string, CompiledEvent>();
function compiledOf(trigger: Trigger): CompiledEvent {
  let entry = compiled.get(trigger);
  if (!entry) {
    const schema = eventSchema(trigger);
    // A schema feature the compiler does not model is left to zod rather than breaking parsing.
    entry = { schema, valid: compileValidator(schema, { unsupported: 'zod' }) };
    compiled.set(trigger, entry);
  }
  return entry;
}

/** The zod schema of a known trigger's whole event (envelope fields included). */
export function eventSchemaOf(trigger: Trigger): z.ZodType {
  return compiledOf(trigger).schema;
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
  const entry = compiled.get(event.trigger) ?? (isKnownTrigger(event.trigger) ? compiledOf(event.trigger) : undefined);
  if (!entry || entry.valid(event)) return undefined;
  // zod stays the authority: it explains the rejection (its first few issues), and its verdict wins should
  // the two ever disagree.
  return explainRejection(entry.schema, event);
}
