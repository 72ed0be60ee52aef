/** A pino-compatible logger: any of `debug`, `info`, `warn`, `error` taking (fields, message). */
export interface WebhookLogger {
  debug?(fields: Record<string, unknown>, message?: string): void;
  info?(fields: Record<string, unknown>, message?: string): void;
  warn?(fields: Record<string, unknown>, message?: string): void;
  error?(fields: Record<string, unknown>, message?: string): void;
}

/**
 * C0 and C1 controls (newline, carriage return, ESC, CSI) and the Unicode line separators. Record keys,
 * unknown trigger names and header values are chosen by whoever sends the request: written raw they could
 * start forged log lines or drive the terminal.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const escapeControl = (text: string) =>
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
  warn: (fields, message) => console.warn(line(fields, message)),
  error: (fields, message) => console.error(line(fields, message)),
};
