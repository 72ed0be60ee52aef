/**
 * The SQL stores keep an entry as one row of the same columns (key, trigger, state as a small integer, times
 * in ms, attempts, last error, raw body, traceparent): a claim and an admin listing are read from it once here.
 */
import { INBOX_STATES, type InboxClaim, type InboxListing, type InboxState } from '../../delivery/port.js';
import { eventOfBody } from '../../delivery/stored-event.js';

export interface EntryRow {
  key: string;
  trigger: string;
  state: number;
  /** A number (SQLite) or the text of an int8 (PostgreSQL). */
  received_at: number | string;
  attempts: number;
  last_error: string | null;
  raw_body: string | null;
  traceparent: string | null;
}

type EventOf<R> = (row: R & { raw_body: string }) => InboxClaim['event'];
const eventOfRawBody = (row: { raw_body: string }): InboxClaim['event'] => eventOfBody(row.raw_body);

/** The claim a claimed row is handed out as, under this holder's lease token. */
export function claimOfRow<R extends EntryRow>(row: R, token: string, eventOf: EventOf<R> = eventOfRawBody): InboxClaim {
  const held = row as R & { raw_body: string };
  return {
    key: row.key,
    trigger: row.trigger,
    event: eventOf(held),
    rawBody: held.raw_body,
    receivedAt: Number(row.received_at),
    attempt: row.attempts,
    token,
    ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
  };
}

/** A row as the admin sees it; a done row has dropped its body. */
export function listingOfRow<R extends EntryRow>(row: R, eventOf: EventOf<R> = eventOfRawBody): InboxListing {
  return {
    key: row.key,
    trigger: row.trigger,
    state: INBOX_STATES[row.state] as InboxState,
    receivedAt: Number(row.received_at),
    attempts: row.attempts,
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.raw_body === null ? {} : { event: eventOf(row as R & { raw_body: string }), rawBody: row.raw_body }),
  };
}
