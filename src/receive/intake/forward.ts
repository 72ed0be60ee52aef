/**
 * An inbox that forwards: each stored event goes to a function (an SQS send, say) that another system
 * consumes. This is how `enqueue` (the Lambda adapter's option, `HandleOptions.enqueue`) works: the one
 * inbox mechanism, with a store that lives elsewhere. It keeps no events, so its worker side is empty; it
 * remembers forwarded keys in memory (bounded, not durable) so a repeat reaching the same instance is not
 * forwarded twice.
 */
import type { ParsedWebhook } from '../../events/index.js';
import type { Inbox, InboxStats, PutResult } from '../../delivery/port.js';
import { DedupeWindow } from './dedupe.js';
import { WebhookError } from '../../dispatch/errors.js';

export type Enqueue = (event: ParsedWebhook) => Promise<unknown>;

const NOTHING: InboxStats = Object.freeze({ pending: 0, running: 0, done: 0, dead: 0 });

export function forwardingInbox(enqueue: Enqueue, seen: DedupeWindow | undefined = new DedupeWindow()): Inbox {
  return {
    kind: 'forward',
    durable: true,
    async put(entry): Promise<PutResult> {
      if (seen?.has(entry.key)) return 'duplicate';
      try {
        await enqueue(entry.event);
      } catch (cause) {
        throw new WebhookError('enqueue_failed', 'The event could not be queued; retry later.', { cause });
      }
      seen?.add(entry.key);
      return 'stored';
    },
    claim: async () => undefined,
    renew: async () => false,
    complete: async () => undefined,
    fail: async () => undefined,
    stats: async () => NOTHING,
    list: async () => [],
    retry: async () => 0,
    purge: async () => 0,
    close: async () => undefined,
  };
}
