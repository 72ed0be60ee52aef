/** A pino-compatible logger: any of `debug`, `info`, `warn`, `error` taking (fields, message). */
export interface WebhookLogger {
  debug?(fields: Record<string, unknown>, message?: string): void;
  info?(fields: Record<string, unknown>, message?: string): void;
  warn?(fields: Record<string, unknown>, message?: string): void;
  error?(fields: Record<string, unknown>, message?: string): void;
}

/** Default: failures nobody handles still show up on stderr, so nothing fails silently. */
export const consoleLogger: WebhookLogger = {
  warn: (fields, message) => console.warn(`[chat-webhooks] ${message ?? ''}`, fields),
  error: (fields, message) => console.error(`[chat-webhooks] ${message ?? ''}`, fields),
};
