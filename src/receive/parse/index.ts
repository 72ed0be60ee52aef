/**
 * Parse: a body becomes an event. parse.ts reads the JSON and the envelope, validate.ts answers "would zod
 * accept this?" with the compiled validators (src/compile/), and explain.ts says why not, at a bounded cost.
 */
export { parseWebhook, safeParseExplained, safeParseWebhook } from './parse.js';
export type { SafeParseResult, WebhookBody } from './parse.js';
