/**
 * The app creation body of the management interface (spec 2.7 and 9.2): `name`, `version` (`"3"` for a new
 * app) and `region`, one of the hosting regions (any case in, lower case out).
 */
import { z } from 'zod';
import { regions } from './base-url.js';

export const appCreateSchema = z.looseObject({
  name: z.string().trim().min(1, 'name is required'),
  version: z.string().min(1).default('3'),
  region: z.preprocess(
    (value) => (typeof value === 'string' ? value.trim().toLowerCase() : value),
    z.enum(regions, { error: `region must be one of ${regions.join(', ')}` }),
  ),
});

/** What `apps.create` accepts. */
export interface AppCreateInput {
  name: string;
  region: 'us' | 'eu' | 'in' | 'US' | 'EU' | 'IN' | (string & {});
  /** Defaults to `"3"`. */
  version?: string;
  [field: string]: unknown;
}
/** The body sent to `POST /apps`. */
export type AppCreateBody = z.output<typeof appCreateSchema>;
