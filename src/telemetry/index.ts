/** `chat-webhooks/otel`: OpenTelemetry traces and metrics for a receiver and its workers (README, "Observability"). */
export { openTelemetry } from './otel.js';
export type { OpenTelemetryOptions } from './otel.js';
export type {
  AttemptInfo,
  AttemptTelemetry,
  CommitTelemetry,
  FailureLike,
  HandlersOutcome,
  ObservedInbox,
  RequestTelemetry,
  Telemetry,
} from './hooks.js';
