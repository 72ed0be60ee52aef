/** The events folder's public face: the trigger registry, the record schemas and the event types. */
export { registry, triggers } from './registry.js';
export type { EnvelopeType, Registry, Trigger, TriggerDefinition } from './registry.js';
export { isKnownTrigger } from './known.js';
export type { DataOf, EventOf, ParsedWebhook, UnknownWebhookEvent, WebhookEvent } from './types.js';
export type { CallEntity, Connection, Group, Message, Occupant, Reaction, User } from './records.js';
export { appIdOf, documentedKey, idempotencyFields, keyPart, keyPrefix } from './idempotency.js';
