/**
 * Telemetry: hooks.ts is what the receiver and the worker call (types only, no dependency: none of it runs
 * unless `telemetry` is set); otel/ implements those hooks with OpenTelemetry, behind `chat-webhooks/otel`.
 */
export type * from './hooks.js';
