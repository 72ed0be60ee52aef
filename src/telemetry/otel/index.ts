/** `chat-webhooks/otel`: OpenTelemetry traces and metrics for a receiver and its workers (README, "Observability"). */
export { openTelemetry } from './otel.js';
export type { OpenTelemetryOptions } from './otel.js';
// Every type of the hooks an implementation of `telemetry` writes to (they are all public).
export type * from '../hooks.js';
