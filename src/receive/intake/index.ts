/**
 * Intake: a request from its headers to its answer. admission.ts decides what the headers alone can (shutting
 * down, method, size, content type, auth); intake.ts reads the body within its deadlines (body-deadlines.ts),
 * parses it and commits it (commit.ts: to the inbox, forward.ts for `enqueue`) or checks the in-memory window
 * (dedupe.ts); answers.ts says the outcome and starts the work it leaves, which in-flight.ts tracks for
 * close(); traced.ts reports it to telemetry.
 */
export { workFinished } from './in-flight.js';
export type { DedupeOptions } from './dedupe.js';
