/**
 * The check of a worker's `transaction` option: only an inbox whose database can hold the handlers' writes
 * and the entry's completion in one transaction takes it, and the error for any other says why not.
 */
import { ConfigurationError } from '../dispatch/errors.js';
import type { Inbox } from './port.js';

/** Why each store without transactions cannot have them, by `inbox.kind`. */
const WHY_NOT: Record<string, string> = {
  memory: 'the memory inbox keeps its entries in this process, not in a database your handlers could write to',
  sqlite:
    'SQLite has one writer at a time: a transaction held open while a handler runs would hold up every receiver\'s commit (each delivery\'s 200) for as long as the handler takes',
  redis: 'Redis cannot commit your database\'s writes together with its own',
};

export function checkTransactionOption(transaction: unknown, inbox: Inbox): void {
  if (transaction === undefined || transaction === false) return;
  if (transaction !== true) throw new ConfigurationError('transaction', '`transaction` must be true or false.');
  if (inbox.transactions) return;
  const why = WHY_NOT[inbox.kind] ?? `the ${JSON.stringify(inbox.kind)} inbox has no transactions to run handlers in`;
  throw new ConfigurationError(
    'transaction',
    `\`transaction: true\` needs postgresInbox (chat-webhooks/postgres): the handlers' writes commit with the event's completion in one PostgreSQL transaction. Not with this inbox: ${why}.`,
  );
}
