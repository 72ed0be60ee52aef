/** What `webhooks.redeliver` takes and resolves (src/receive/redeliver.ts), apart: catch-up's interface names them too. */
export interface RedeliverOptions {
  /** Where the body came from; the handlers' `context.source`. @defaultValue 'reconcile' */
  source?: 'reconcile';
}

/**
 * What a redelivered body became: `handled` (its handlers ran here: `ok` says whether they all succeeded, as
 * far as the receiver knows), `stored` (committed to the inbox for the workers), `duplicate` (its key was
 * known: nothing ran, onDuplicate did), `refused` (the receiver refused it: `status` and `code` say why, and
 * onError has it).
 */
export interface Redelivery {
  outcome: 'handled' | 'stored' | 'duplicate' | 'refused';
  /** The status a delivery of this body would have been answered with. */
  status: number;
  /** The refusal's error code (`invalid_payload`, `inbox_failed`, …). */
  code?: string;
}
