/**
 * One delivery `listen` received, as readable lines: what, the verdict with paths, the key, repeat or not.
 * Everything a sender chose (trigger, field values, key, issue paths, the answer quoting them) goes through
 * `escapeControl`, as in the library's logger: a newline or an escape sequence in a trigger name would
 * otherwise forge a line or drive the terminal.
 */
import { escapeControl as safe } from '../index.js';
import type { Captured } from './captured.js';
import { formatKeyFields } from './describe.js';
import { formatIssue } from './issues.js';
import type { Output } from './output.js';

export function printDelivery(output: Output, record: Captured): void {
  const { color } = output;
  const time = color.dim(record.receivedAt.slice(11, 19));
  const trigger = color.bold(safe(record.trigger ?? '(no trigger)'));
  const status = record.status < 300 ? color.green(String(record.status)) : color.red(String(record.status));
  const code = safe(record.code ?? '');
  const verdict = {
    valid: color.green('✓ valid'),
    unknown: color.yellow('? unknown trigger (accepted, reaches onUnknown)'),
    invalid: color.red(`✗ ${code} (accepted, reported to onError)`),
    refused: color.red(`✗ refused: ${code}`),
  }[record.verdict];
  output.line(`${time} ${status} ${trigger} ${verdict}`);
  if (record.fields.length > 0) output.line(`    ${safe(formatKeyFields(record.fields))}`);
  // A 400's answer repeats its issue; other refusals have only the answer to say why.
  if (record.answer && record.verdict === 'refused' && record.issues.length === 0) output.line(`    answer: ${safe(record.answer)}`);
  for (const issue of record.issues) output.line(`    ${color.red(safe(formatIssue(issue)))}`);
  if (record.key) {
    const repeat =
      record.verdict === 'invalid'
        ? 'not stored: invalid'
        : record.duplicate
          ? color.yellow('duplicate: handlers not run again')
          : 'first delivery';
    output.line(`    ${color.dim(`key ${safe(record.key)}`)} · ${repeat}`);
  }
  if (record.forward) printForward(output, record.forward);
}

/** The forward's outcome: `→ url status ms`, or why it failed. */
export function printForward(output: Output, forward: NonNullable<Captured['forward']>, label = '→'): void {
  const { color } = output;
  const result = forward.status !== undefined ? String(forward.status) : `failed (${safe(forward.error ?? '')})`;
  const ok = forward.status !== undefined && forward.status < 300;
  output.line(`    ${label} ${forward.url} ${ok ? color.green(result) : color.red(result)} ${Math.round(forward.ms)} ms`);
}
