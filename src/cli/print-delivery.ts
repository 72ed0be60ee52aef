/** One delivery `listen` received, as readable lines: what, the verdict with paths, the key, repeat or not. */
import type { Captured } from './captured.js';
import { formatKeyFields } from './describe.js';
import { formatIssue } from './issues.js';
import type { Output } from './output.js';

export function printDelivery(output: Output, record: Captured): void {
  const { color } = output;
  const time = color.dim(record.receivedAt.slice(11, 19));
  const trigger = color.bold(record.trigger ?? '(no trigger)');
  const status = record.status < 300 ? color.green(String(record.status)) : color.red(String(record.status));
  const verdict = {
    valid: color.green('✓ valid'),
    unknown: color.yellow('? unknown trigger (accepted, reaches onUnknown)'),
    invalid: color.red(`✗ ${record.code} (accepted, reported to onError)`),
    refused: color.red(`✗ refused: ${record.code}`),
  }[record.verdict];
  output.line(`${time} ${status} ${trigger} ${verdict}`);
  if (record.fields.length > 0) output.line(`    ${formatKeyFields(record.fields)}`);
  // A 400's answer repeats its issue; other refusals have only the answer to say why.
  if (record.answer && record.verdict === 'refused' && record.issues.length === 0) output.line(`    answer: ${record.answer}`);
  for (const issue of record.issues) output.line(`    ${color.red(formatIssue(issue))}`);
  if (record.key) {
    const repeat =
      record.verdict === 'invalid'
        ? 'not stored: invalid'
        : record.duplicate
          ? color.yellow('duplicate: handlers not run again')
          : 'first delivery';
    output.line(`    ${color.dim(`key ${record.key}`)} · ${repeat}`);
  }
  if (record.forward) {
    const { forward } = record;
    const result = forward.status !== undefined ? String(forward.status) : `failed (${forward.error})`;
    const ok = forward.status !== undefined && forward.status < 300;
    output.line(`    → ${forward.url} ${ok ? color.green(result) : color.red(result)} ${Math.round(forward.ms)} ms`);
  }
}
