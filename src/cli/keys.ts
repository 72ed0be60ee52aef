/**
 * The idempotency key the CLI shows for a delivery.
 * TODO(lead): another helper adds `idempotencyKey(event, rawBody?)` (and the fields it reads per trigger) to
 * `chat-webhooks`; once that is on main, use it here instead of this local SHA-256 of the raw body, and let
 * `triggers` list its per-trigger fields.
 */
import { createHash } from 'node:crypto';

export function deliveryKey(trigger: string, rawBody: string | Uint8Array): string {
  return `${trigger}:${createHash('sha256').update(rawBody).digest('hex').slice(0, 32)}`;
}

/** What the key of a trigger's deliveries is made of. */
export function keyFieldsOf(_trigger: string): string[] {
  return ['sha-256 of the raw body'];
}
