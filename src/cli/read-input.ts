/**
 * Reading events from a file or stdin (`-`): one JSON document, or NDJSON (one per line). Lines that
 * `listen --json` wrote are recognised: their `rawBody` is the delivery.
 */
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { usageError } from './errors.js';

export interface Document {
  /** Line number where the document starts (1-based). */
  line: number;
  /** The delivery's body as text. */
  body: string;
  /** A `listen --json` record of a delivery the receiver refused (401, 405, 413, ...). */
  refused?: true;
}

export async function readInput(source: string): Promise<string> {
  if (source === '-') return readStream(process.stdin);
  try {
    return await readFile(source, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    throw usageError(code === 'ENOENT' ? `No such file: ${source}.` : `Cannot read ${source}: ${code ?? String(cause)}.`);
  }
}

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The delivery a line holds: a `listen --json` record's raw body (and whether it was refused), or the line itself. */
function bodyOf(text: string): { body: string; refused?: true } {
  try {
    const value = JSON.parse(text) as { rawBody?: unknown; seq?: unknown; verdict?: unknown };
    if (value && typeof value === 'object' && typeof value.rawBody === 'string' && typeof value.seq === 'number') {
      return { body: value.rawBody, ...(value.verdict === 'refused' ? { refused: true as const } : {}) };
    }
  } catch {
    // Not JSON: the receiver's parser reports it.
  }
  return { body: text };
}

/** Splits input into documents: the whole text when it is one JSON value (or one broken one), else its lines. */
export function splitDocuments(input: string): Document[] {
  const lines = input.split(/\r?\n/);
  const first = lines.findIndex((line) => line.trim() !== '');
  if (first === -1) return [{ line: 1, body: input }];
  const ndjson = !parses(input) && parses(lines[first] as string);
  if (!ndjson) return [{ line: first + 1, ...bodyOf(input.trim()) }];
  return lines.flatMap((line, index) => (line.trim() === '' ? [] : [{ line: index + 1, ...bodyOf(line) }]));
}
