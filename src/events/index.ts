/**
 * The events folder's public face: the trigger ids, the event types and the keys. Nothing here loads zod: the
 * registry's schemas are chat-webhooks/schemas' (src/receive/schemas.ts), and the receive path validates with the
 * validators generated from them.
 */
export { triggers } from './generated/validators.js';
export type { EnvelopeType, Registry, Trigger, TriggerDefinition } from './registry.js';
export { isKnownTrigger, knownTrigger } from './known.js';
export type { DataOf, EventOf, ParsedWebhook, UnknownWebhookEvent, WebhookEvent } from './types.js';
export type { CallEntity, Connection, Group, Message, Occupant, Reaction, User } from './records.js';
export { appIdOf, documentedKey, idempotencyFields, keyPart, keyPrefix } from './idempotency.js';
