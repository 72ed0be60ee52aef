/**
 * The receiver's view of a durable inbox, until src/inbox/port.ts (the Inbox contract of docs/design.md) replaces it.
 */
import type { ParsedWebhook } from '../events/index.js';

/** What a durable inbox stores before the delivery is acknowledged. */
export interface InboxEntry {
  key: string;
  event: ParsedWebhook;
  rawBody: string | Uint8Array;
  receivedAt: number;
}

/** A durable store: the 200 is sent only once `put` resolved, so an acknowledged event survives a crash. */
export interface WebhookInbox {
  put(entry: InboxEntry): Promise<void>;
  /** Called once every handler for the entry has finished. */
  ack?(key: string): Promise<void>;
}
