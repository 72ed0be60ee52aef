/**
 * `chat-webhooks/schemas`: the trigger registry, each trigger's `data` as a zod schema, and the whole event's
 * schema. It is the package's zod side, apart from the main entry so that receiving loads no zod (issue 37).
 * Having loaded zod, it hands the receiver its explanation of rejections, which then never loads on its own.
 */
import { explain } from './parse/zod-explain.js';
import { registerExplainer } from './parse/explainer.js';

export { registry, triggers } from '../events/registry.js';
export type { EnvelopeType, Registry, Trigger, TriggerDefinition } from '../events/registry.js';
export { eventSchemaOf } from '../events/event-schema.js';

registerExplainer(explain);
