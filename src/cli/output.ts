/**
 * Where a command's output goes and how it looks: readable lines on a terminal, NDJSON with `--json`.
 * Colors only when the stream is a TTY and `NO_COLOR` is unset or empty (https://no-color.org).
 */
import type { Writable } from 'node:stream';
import { escapeControl } from '../index.js';

type Paint = (text: string) => string;

export interface Palette {
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
  dim: Paint;
  bold: Paint;
}

const ansi =
  (open: number, close: number): Paint =>
  (text) =>
    `\u001b[${open}m${text}\u001b[${close}m`;

const COLORS: Palette = {
  red: ansi(31, 39),
  green: ansi(32, 39),
  yellow: ansi(33, 39),
  cyan: ansi(36, 39),
  dim: ansi(2, 22),
  bold: ansi(1, 22),
};

const plain: Paint = (text) => text;
const NO_COLORS: Palette = { red: plain, green: plain, yellow: plain, cyan: plain, dim: plain, bold: plain };

/** Whether a stream is a terminal a person reads. */
export function isTerminal(stream: Writable): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

export function colorsFor(stream: Writable, env: NodeJS.ProcessEnv = process.env): Palette {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return isTerminal(stream) && !noColor ? COLORS : NO_COLORS;
}

/**
 * Multi-line text a sender chose (a raw body, an event as indented JSON), its line breaks kept so it reads as
 * it was written, every other control character escaped (`escapeControl`): a carriage return cannot overwrite
 * a line, nor an escape sequence drive the terminal.
 */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControl).join('\n');
}

export class Output {
  readonly json: boolean;
  /** Colors for stdout. */
  readonly color: Palette;
  /** Colors for stderr (progress, warnings). */
  readonly errColor: Palette;

  constructor(
    options: { json?: boolean } = {},
    readonly out: Writable = process.stdout,
    readonly err: Writable = process.stderr,
  ) {
    this.json = options.json === true;
    this.color = colorsFor(out);
    this.errColor = colorsFor(err);
  }

  /** A line for a person; nothing in `--json` mode. */
  line(text = ''): void {
    if (!this.json) this.out.write(`${text}\n`);
  }

  /** One NDJSON record in `--json` mode; nothing otherwise. JSON leaves C1 controls and U+2028/2029 raw: they
   * are escaped too (still the same JSON), so a record shown on a terminal cannot drive it. */
  record(value: unknown): void {
    if (this.json) this.out.write(`${escapeControl(JSON.stringify(value))}\n`);
  }

  /** A note for a person on stderr, so it never mixes into NDJSON on stdout. */
  note(text: string): void {
    this.err.write(`${text}\n`);
  }
}
