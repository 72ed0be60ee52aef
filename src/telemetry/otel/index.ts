/** `chat-webhooks/otel`: OpenTelemetry traces and metrics for a receiver and its workers ([observability guide](https://github.com/chat-webhooks/chat-webhooks/blob/main/docs/observability.md)). */
export { openTelemetry } from './otel.js';
export type { OpenTelemetryOptions } from './otel.js';
// Every type of the hooks an implementation of `telemetry` writes to (they are all public).
export type * from '../hooks.js';
