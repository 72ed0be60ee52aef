/**
 * The zod schema of a known trigger's whole event: the envelope's fields around the registry's `data`. The
 * validators generated from it (src/events/generated/validators.ts) answer the happy path; zod itself only
 * explains a rejection (src/receive/parse/explain.ts), so this module loads only then.
 */
import { z } from 'zod';
import { openSet } from './records.js';
import { registry, type Trigger } from './registry.js';

const envelopeFields = {
  appId: z.string().optional(),
  region: z.string().optional(),
  webhook: z.string().optional(),
};

function eventSchema(trigger: Trigger): z.ZodType {
  const definition = registry[trigger];
  return z.object({
    trigger: z.literal(trigger),
    data: definition.data,
    // Only call and meeting events carry `type`; elsewhere an unexpected one is kept, unchecked.
    ...('envelopeType' in definition ? { type: openSet(definition.envelopeType).optional() } : {}),
    ...envelopeFields,
  });
}

const schemas = new Map<string, z.ZodType>();

/**
 * The zod schema of a known trigger's whole event (envelope fields included), built once.
 *
 * @example
 * ```ts
 * import { eventSchemaOf } from 'chat-webhooks/schemas';
 *
 * const result = eventSchemaOf('message_sent').safeParse(JSON.parse(body));
 * if (!result.success) console.error(result.error.issues);
 * ```
 */
export function eventSchemaOf(trigger: Trigger): z.ZodType {
  let schema = schemas.get(trigger);
  if (!schema) schemas.set(trigger, (schema = eventSchema(trigger)));
  return schema;
}
