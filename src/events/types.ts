import type { z } from 'zod';
import type { Registry, Trigger } from './registry.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Envelope fields every delivery may carry (spec 6.1). */
interface EnvelopeFields {
  /** Id of the app the event belongs to. */
  appId?: string;
  /** Hosting region of the app (`us`, `eu`, `in`). */
  region?: string;
  /** Id of the webhook configuration that delivered it. */
  webhook?: string;
}

type EnvelopeTypeField<T extends Trigger> = Registry[T] extends { envelopeType: infer E extends string }
  ? { type?: E | (string & {}) }
  : {};

/** The payload (`data`) of a trigger. */
export type DataOf<T extends Trigger> = z.output<Registry[T]['data']>;

/** A validated delivery of trigger `T`: `EventOf<'message_sent'>`. A union of triggers gives a union of events. */
export type EventOf<T extends Trigger> = T extends Trigger
  ? Simplify<{ trigger: T; data: DataOf<T> } & EnvelopeFields & EnvelopeTypeField<T>>
  : never;

/** Any validated delivery of a known trigger, discriminated by `trigger`. */
export type WebhookEvent = EventOf<Trigger>;

/**
 * A delivery whose trigger this version of the library does not know (the service adds triggers over time).
 * Only the envelope was checked: `trigger` is a string and `data` an object.
 */
export interface UnknownWebhookEvent extends EnvelopeFields {
  trigger: string;
  data: Record<string, unknown>;
  type?: string;
  [field: string]: unknown;
}

/** What parsing a delivery yields: a typed event, or an unknown one. */
export type ParsedWebhook = WebhookEvent | UnknownWebhookEvent;
