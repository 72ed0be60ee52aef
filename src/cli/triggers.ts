/** `triggers`: the triggers this version knows, what fires them, and what their idempotency key is made of. */
import { Command } from 'commander';
import { triggers as known } from '../index.js';
import { registry } from '../receive/schemas.js';
import { keyFieldsOf } from './keys.js';
import { Output } from './output.js';
import { summaries } from './summaries.js';

export interface TriggerInfo {
  trigger: string;
  fires: string;
  envelopeType?: string;
  /** Observed from the live service, not in the spec's trigger table. */
  beyondSpec: boolean;
  keyFields: string[];
}

export function triggerInfos(): TriggerInfo[] {
  return known.map((trigger) => {
    const definition = registry[trigger] as { fires: string; envelopeType?: string; beyondSpec?: true };
    return {
      trigger,
      fires: definition.fires,
      ...(definition.envelopeType ? { envelopeType: definition.envelopeType } : {}),
      beyondSpec: definition.beyondSpec === true,
      keyFields: keyFieldsOf(trigger),
    };
  });
}

export function listTriggers(options: { json?: boolean }): number {
  const output = new Output(options);
  const infos = triggerInfos();
  const width = Math.max(...infos.map((info) => info.trigger.length));
  for (const info of infos) {
    output.record(info);
    const type = info.envelopeType ? output.color.dim(` [type ${info.envelopeType}]`) : '';
    const beyond = info.beyondSpec ? output.color.yellow(' (observed beyond the spec)') : '';
    output.line(`${output.color.cyan(info.trigger.padEnd(width))}  ${info.fires}${type}${beyond}`);
    output.line(`${' '.repeat(width)}  ${output.color.dim(`key: ${info.keyFields.join(', ')}`)}`);
  }
  output.line(`\n${infos.length} triggers. Unknown triggers are accepted too and reach onUnknown.`);
  return 0;
}

export function triggersCommand(): Command {
  return new Command('triggers')
    .description(summaries.triggers.description)
    .option('--json', 'one JSON object per trigger per line')
    .addHelpText('after', '\nExamples:\n  $ chat-webhooks triggers\n  $ chat-webhooks triggers --json | jq -r .trigger')
    .action((options: { json?: boolean }) => {
      process.exitCode = listTriggers(options);
    });
}
