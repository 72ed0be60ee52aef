/**
 * Idempotency keys as the CLI shows them: the package's own `idempotencyKey` (the documented fields of the
 * trigger, else a digest of the exact body), and what each trigger's key is made of.
 */
import { idempotencyFields, idempotencyKey, type ParsedWebhook } from '../index.js';

export function deliveryKey(event: ParsedWebhook, rawBody: string): string {
  return idempotencyKey(event, rawBody);
}

/** What the key of a trigger's deliveries is made of: `data.` paths, or the body's digest. */
export function keyFieldsOf(trigger: string): string[] {
  const paths = Object.hasOwn(idempotencyFields, trigger) ? idempotencyFields[trigger] : undefined;
  if (!paths) return ['sha-256 of the exact body'];
  return paths.map((path) => `data.${path.join('.')}`);
}
