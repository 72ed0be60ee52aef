/** The helpers both kinds of validator call at validation time, as zod judges. */
import { z } from 'zod';
import type { Validator } from '../events/validation.js';
import type { Schema } from './tree.js';

export { hasEnumerableSymbol, isPlainObject, type Validator } from '../events/validation.js';

/** A sub-schema the compiler leaves to zod. */
export const zodJudge = (schema: Schema): Validator => (value) => z.safeParse(schema, value).success;
