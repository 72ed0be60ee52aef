/**
 * What to try when an answer says what is missing. A 401 to a request sent without credentials is nearly
 * always a receiver that wants Basic auth and a command given no `--user`: the status alone does not say so.
 */
import type { RunSummary } from './stats.js';

/** For `send` and `replay`: the flags that would have sent credentials, when some delivery got a 401 without. */
export function missingCredentialsHint(summary: RunSummary, sentCredentials: boolean): string | undefined {
  if (sentCredentials || summary.statuses['401'] === undefined) return undefined;
  return (
    'Hint: the receiver answered 401 (it wants Basic auth) and no credentials were sent: give --user and ' +
    '--password (or CHAT_WEBHOOKS_USER and CHAT_WEBHOOKS_PASSWORD).'
  );
}

/**
 * For `listen --forward`: a forward carries the delivery's own Authorization, so a 401 from the app means the
 * delivery came without one (the sender needs --user) or with one the app refuses.
 */
export function forwardRefusedHint(forwardUrl: string, deliveryHadCredentials: boolean): string {
  return deliveryHadCredentials
    ? `Hint: ${forwardUrl} answered 401 to the credentials the delivery came with: give the sender the ones your app expects.`
    : `Hint: ${forwardUrl} answered 401 (it wants Basic auth) and the delivery came without credentials: send it with ` +
        '--user and --password (listen forwards them as they came; give listen the same --user/--password to check them too).';
}
