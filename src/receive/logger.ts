/** A pino-compatible logger: any of `debug`, `info`, `warn`, `error` taking (fields, message). */
export interface WebhookLogger {
  debug?(fields: Record<string, unknown>, message?: string): void;
  info?(fields: Record<string, unknown>, message?: string): void;
  warn?(fields: Record<string, unknown>, message?: string): void;
  error?(fields: Record<string, unknown>, message?: string): void;
}

/** The lowest level a logger passes on; `'silent'` passes nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const METHODS = ['debug', 'info', 'warn', 'error'] as const;

/** Default: failures nobody handles still show up on stderr, so nothing fails silently. */
export const consoleLogger: WebhookLogger = {
  debug: (fields, message) => console.debug(`[chat-webhooks] ${message ?? ''}`, fields),
  info: (fields, message) => console.info(`[chat-webhooks] ${message ?? ''}`, fields),
  warn: (fields, message) => console.warn(`[chat-webhooks] ${message ?? ''}`, fields),
  error: (fields, message) => console.error(`[chat-webhooks] ${message ?? ''}`, fields),
};

/**
 * Whether the `DEBUG` environment variable asks for this library's debug output, as the `debug` package
 * reads it (`chat-webhooks`, `chat-webhooks*`, `*`, in a comma- or space-separated list). Reads `process`
 * through globalThis: workers have none.
 */
export function debugRequested(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const patterns = env?.DEBUG?.split(/[\s,]+/) ?? [];
  return patterns.some((pattern) => pattern === '*' || pattern === 'chat-webhooks' || pattern === 'chat-webhooks*' || pattern === 'chat-webhooks:*');
}

/**
 * The logger the receiver uses: the given one (or the console), passing on only `level` and above. Without
 * a level, the console logs warnings and errors (debug when `DEBUG=chat-webhooks`) and a given logger
 * everything, as its own level decides.
 */
export function leveled(logger: WebhookLogger | undefined, level: LogLevel | undefined): WebhookLogger {
  const wanted = level ?? (debugRequested() ? 'debug' : logger ? undefined : 'warn');
  const target = logger ?? consoleLogger;
  if (wanted === undefined) return target;
  const lowest = wanted === 'silent' ? METHODS.length : METHODS.indexOf(wanted);
  const result: WebhookLogger = {};
  METHODS.forEach((method, rank) => {
    const write = target[method];
    if (rank >= lowest && write) result[method] = write.bind(target);
  });
  return result;
}
