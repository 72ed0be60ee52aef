/** Options several commands share. */
import { Option, type Command } from 'commander';

/** `--user`/`--password` for Basic auth, also from the environment so a password stays out of shell history. */
export function authOptions(command: Command): Command {
  return command
    .addOption(new Option('--user <user>', 'Basic auth user name').env('CHAT_WEBHOOKS_USER'))
    .addOption(new Option('--password <password>', 'Basic auth password').env('CHAT_WEBHOOKS_PASSWORD'));
}
