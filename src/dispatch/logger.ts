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

/**
 * C0 and C1 controls (newline, carriage return, ESC, CSI) and the Unicode line separators. Record keys,
 * unknown trigger names and header values are chosen by whoever sends the request: written raw they could
 * start forged log lines or drive the terminal.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * The text with every control character written as a `\uXXXX` escape (C0 and C1 controls, DEL, U+2028/2029),
 * so text chosen by a sender (a trigger name, a record key, a header) printed to a log or a terminal can
 * neither start a forged line nor drive the terminal. The console logger writes every line through it.
 *
 * @example
 * ```ts
 * import { escapeControl } from 'chat-webhooks';
 * console.log(`trigger ${escapeControl(event.trigger)}`); // 'x\n\u001b[2J' prints as x\u000a\u001b[2J
 * ```
 */
export const escapeControl = (text: string): string =>
  text.replace(CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One line: the message, then the fields as JSON, every control character escaped. */
function line(fields: Record<string, unknown>, message: string | undefined): string {
  let detail: string;
  try {
    detail = JSON.stringify(fields, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  } catch {
    detail = '{"fields":"not serializable"}';
  }
  return escapeControl(`[chat-webhooks] ${message ?? ''} ${detail}`);
}

/** Default: failures nobody handles still show up on stderr, so nothing fails silently. */
export const consoleLogger: WebhookLogger = {
  debug: (fields, message) => console.debug(line(fields, message)),
  info: (fields, message) => console.info(line(fields, message)),
  warn: (fields, message) => console.warn(line(fields, message)),
  error: (fields, message) => console.error(line(fields, message)),
};

/**
 * Whether the `DEBUG` environment variable asks for this library's debug output, as the `debug` package
 * reads it (`chat-webhooks`, `chat-webhooks*`, `*`, in a comma- or space-separated list). Reads `process`
 * through globalThis, as workers have none, and takes a refusal to read it (Deno without --allow-env throws)
 * as no.
 */
export function debugRequested(): boolean {
  let value: string | undefined;
  try {
    value = (globalThis as { process: { env: Record<string, string | undefined> } }).process.env.DEBUG;
  } catch {
    // No process (a worker), no env, or a refusal: no.
  }
  if (value === undefined) return false;
  // Empty strings between separators match no pattern.
  return value
    .split(/[\s,]/)
    .some((pattern) => pattern === '*' || pattern === 'chat-webhooks' || pattern === 'chat-webhooks*' || pattern === 'chat-webhooks:*');
}

/**
 * The logger the receiver uses: the given one (or the console), passing on only `level` and above. Without
 * a level, the console logs warnings and errors (debug when `DEBUG=chat-webhooks`) and a given logger
 * everything, as its own level decides.
 */
export function leveled(logger: WebhookLogger | undefined, level: LogLevel | undefined): WebhookLogger {
  // Without a level, a given logger and a DEBUG-requested console pass everything (as 'debug' would).
  const wanted = level ?? (logger || debugRequested() ? undefined : 'warn');
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
