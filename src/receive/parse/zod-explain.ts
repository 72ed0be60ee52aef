/** The one module of the receive path that loads zod: explainer.ts imports it on the first rejection. */
import type { z } from 'zod';
import { eventSchemaOf } from '../../events/event-schema.js';
import type { Trigger } from '../../events/index.js';
import { explainRejection } from './explain.js';

/** zod's first few issues for an event its trigger's validator rejected, or undefined when zod accepts it. */
export type Explain = (trigger: Trigger, event: unknown) => z.core.$ZodIssue[] | undefined;

export const explain: Explain = (trigger, event) => explainRejection(eventSchemaOf(trigger), event);
