/**
 * What the receiver and the worker both tell telemetry (src/telemetry/hooks.ts) of an attempt at an event's
 * handlers, and the check that `telemetry` is one: written once here, below both.
 */
import { sha256 } from '#platform';
import type { ParsedWebhook } from '../events/index.js';
import type { AttemptInfo, Telemetry } from '../telemetry/hooks.js';
import { ConfigurationError } from './errors.js';

/** A digest for telemetry (96 bits of SHA-256, hex): an idempotency key or a conversation id can hold user ids. */
export function digest(text: string): string {
  let hex = '';
  for (const byte of sha256(text).subarray(0, 12)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** One attempt at an event's handlers, as telemetry is told of it: the key only as its digest. */
export function attemptInfo(event: ParsedWebhook, trigger: string, key: string, attempt: number, traceparent: string | undefined): AttemptInfo {
  return { event, trigger, attempt, traceparent, keyDigest: () => digest(key), digest };
}

/** Telemetry is an object with the hooks of src/telemetry/hooks.ts (`openTelemetry()` makes one). */
export function checkTelemetry(telemetry: Telemetry | undefined): Telemetry | undefined {
  if (telemetry !== undefined && (telemetry === null || typeof telemetry.request !== 'function' || typeof telemetry.attempt !== 'function')) {
    throw new ConfigurationError('telemetry', "`telemetry` must be openTelemetry() from 'chat-webhooks/otel' (or an object with its hooks).");
  }
  return telemetry;
}
