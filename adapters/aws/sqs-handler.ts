/**
 * `sqsHandler(webhooks, { idempotency })`: the consumer function. Each record of Lambda's SQS event is parsed
 * back into the typed event (the receiver's own validation), its handlers run as a worker would run them
 * (`{ key, attempt, receivedAt }`, `attempt` from ApproximateReceiveCount), and the answer lists exactly the
 * records that failed (`batchItemFailures`), which SQS delivers again: after `maxReceiveCount` receives, the
 * queue's redrive policy moves them to its dead-letter queue.
 */
import { ConfigurationError, rejectUnknownOptions, WebhookError } from '../../src/dispatch/index.js';
import { idempotencyKey, safeParseExplained, type ReceiveOutcome, type Webhooks } from '../../src/receive/index.js';
import { type ParsedWebhook } from '../../src/events/index.js';
import type { IdempotencyStore } from './idempotency.js';
import type { LambdaContext, SqsBatchResponse, SqsEvent, SqsRecord } from './shapes.js';
import { fromRecord, type ReceivedMessage } from './sqs-message.js';
import { requireReceiver } from '../shared/receiver-check.js';

export interface SqsHandlerOptions {
  /**
   * Where keys are claimed before their handlers run, so that a redelivered message (SQS delivers at least
   * once) does not run them again: `dynamoIdempotency({ tableName })`. Without it, a repeat runs them again.
   */
  idempotency?: IdempotencyStore;
  /**
   * Keep each message group's order: a group's records run one after another, and after one fails the rest
   * of its group fails too (SQS delivers them again, in order).
   * @defaultValue true for records from a FIFO queue (a source ARN ending in `.fifo`)
   */
  fifo?: boolean;
}

export type SqsLambdaHandler = (event: SqsEvent, context?: LambdaContext) => Promise<SqsBatchResponse>;

/** Time kept back from the invocation's remaining time to report and answer. */
const SAFETY_MARGIN_MS = 500;
/** The lease on a key without a Lambda context to say how long the invocation may run (Lambda's longest). */
const DEFAULT_LEASE_MS = 15 * 60 * 1000;

interface Run {
  webhooks: Webhooks;
  store: IdempotencyStore | undefined;
  leaseMs: number;
  /** When records still running are given up (and go back to SQS), in ms since the epoch. */
  deadline: number;
}

/**
 * The SQS consumer function: each record's event to the receiver's handlers, answered with the
 * `batchItemFailures` of the records that failed.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { dynamoIdempotency, sqsHandler } from 'chat-webhooks/aws';
 *
 * const webhooks = createWebhooks({ auth: false })
 *   .on('message_sent', async (event, { key, attempt }) => console.log(key, attempt))
 *   .onError((error) => console.error(error.code, error.message));
 * export const consume = sqsHandler(webhooks, { idempotency: dynamoIdempotency({ tableName: process.env.TABLE_NAME! }) });
 * ```
 */
export function sqsHandler(webhooks: Webhooks, options: SqsHandlerOptions = {}): SqsLambdaHandler {
  checkOptions(webhooks, options);
  const { idempotency: store, fifo } = options;
  return async (event, context) => {
    const records = event?.Records;
    if (!Array.isArray(records)) {
      throw new TypeError('sqsHandler got an event that is not from SQS: expected { Records: [...] } from an SQS event source mapping.');
    }
    const remaining = context?.getRemainingTimeInMillis?.();
    const run: Run = {
      webhooks,
      store,
      leaseMs: remaining ?? DEFAULT_LEASE_MS,
      deadline: remaining === undefined ? Infinity : Date.now() + remaining - SAFETY_MARGIN_MS,
    };
    // A record that is not one (null, no body, say) or breaks the reading of it fails alone, reported, rather
    // than the whole batch.
    const handle = (record: SqsRecord) => {
      const flaw = flawOf(record);
      if (flaw !== undefined) return unreadable(webhooks, record, flaw);
      return handleRecord(record, run).catch((cause: unknown) => unreadable(webhooks, record, String(cause), cause));
    };
    const ordered = fifo ?? records.some((record) => String(record?.eventSourceARN).endsWith('.fifo'));
    const ok = ordered ? await inGroups(records, handle) : await Promise.all(records.map(handle));
    // Lambda takes an entry without a valid itemIdentifier for the failure of the whole batch: a record without
    // a messageId (reported) cannot be named.
    const failed = records.filter((record, index) => !ok[index] && hasMessageId(record));
    return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
  };
}

function hasMessageId(record: SqsRecord): boolean {
  return typeof record?.messageId === 'string' && record.messageId !== '';
}

/** Why a Records entry cannot be read as an SQS message, or undefined when it has what reading one takes. */
function flawOf(record: SqsRecord): string | undefined {
  if (record === null || typeof record !== 'object') return `the record is ${record === null ? 'null' : typeof record}, not an SQS message`;
  if (!hasMessageId(record)) return 'the record has no messageId';
  if (typeof record.body !== 'string') return record.body === undefined ? 'the record has no body' : `its body is ${typeof record.body}, not a string`;
  return undefined;
}

function checkOptions(webhooks: Webhooks, options: SqsHandlerOptions): void {
  requireReceiver('sqsHandler', 'sqsHandler(createWebhooks({ auth: false }).on(…), { idempotency })', webhooks, ['receive', 'report']);
  rejectUnknownOptions('sqsHandler', options, ['idempotency', 'fifo']);
  const { idempotency, fifo } = options;
  if (idempotency !== undefined && (typeof idempotency?.begin !== 'function' || typeof idempotency.complete !== 'function')) {
    throw new ConfigurationError('idempotency', '`idempotency` must be a store: dynamoIdempotency({ tableName }) or memoryIdempotency().');
  }
  if (fifo !== undefined && typeof fifo !== 'boolean') throw new ConfigurationError('fifo', '`fifo` must be true or false.');
}

/** FIFO: groups run side by side, each group's records in order; after a failure the rest of the group fails. */
async function inGroups(records: SqsRecord[], handle: (record: SqsRecord) => Promise<boolean>): Promise<boolean[]> {
  // A record never reached (after its group's failure) stays unset, which reads as failed.
  const ok: boolean[] = [];
  // Records without a group id (a standard queue's, with fifo: true) are one group, keyed undefined.
  const groups = new Map<string | undefined, number[]>();
  records.forEach((record, index) => {
    const group = record?.attributes?.MessageGroupId;
    const indexes = groups.get(group);
    if (indexes) indexes.push(index);
    else groups.set(group, [index]);
  });
  const inOrder = async (indexes: number[]) => {
    for (const index of indexes) if (!(ok[index] = await handle(records[index] as SqsRecord))) return;
  };
  await Promise.all(Array.from(groups.values(), inOrder));
  return ok;
}

/** Runs one record's handlers; true when the record is done with (handled, or a repeat of a handled one). */
async function handleRecord(record: SqsRecord, run: Run): Promise<boolean> {
  const { webhooks, store } = run;
  // Too late to start (a FIFO group's later records, an invocation begun with little time): SQS brings it back.
  if (Date.now() >= run.deadline) return false;
  const message = fromRecord(record);
  // Its issues told, even for the first invalid payload, whose explanation (zod) loads then.
  const parsed = await safeParseExplained(message.rawBody);
  if (!parsed.success) {
    await webhooks.report(unparseable(parsed.error, record, message));
    return false;
  }
  const { event } = parsed;
  const key = message.key ?? idempotencyKey(event, message.rawBody);
  // With a store, how the run's claim is settled once its outcome is known: completed, or released for a retry.
  let settle: ((ok: boolean) => Promise<unknown>) | undefined;
  if (store) {
    const begun = await attempt(run, event, message, key, () => store.begin(key, run.leaseMs));
    if (!begun || begun.state === 'busy') return false;
    if (begun.state === 'done') {
      await webhooks.reportDuplicate(event, { key, receivedAt: message.receivedAt });
      return true;
    }
    const { token } = begun;
    settle = (ok) => attempt(run, event, message, key, () => (ok ? store.complete(key, token) : store.release(key, token)));
  }
  const context = { key, attempt: message.attempt, receivedAt: message.receivedAt, traceparent: message.traceparent, queue: 'sqs' };
  const outcome = await withinDeadline(webhooks.receive(event, context, message.rawBody), run.deadline);
  if (outcome === undefined) {
    // Still running as the invocation ends: its lease runs out with it, and SQS delivers the record again.
    const text = `The handlers of a "${event.trigger}" event were still running as the invocation's time ran out; SQS will deliver it again.`;
    await webhooks.report(new WebhookError('handler_timeout', text, { event, rawBody: message.rawBody, key, attempt: message.attempt, willRetry: true }));
    return false;
  }
  await settle?.(outcome.ok);
  return outcome.ok;
}

/**
 * A write to the idempotency store, its failure reported (`inbox_failed`). Resolves undefined when it failed:
 * a failed claim sends the record back to SQS; a failed completion leaves the key to its lease.
 */
async function attempt<T>(run: Run, event: ParsedWebhook, message: ReceivedMessage, key: string, write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch (cause) {
    const text = 'The idempotency store could not be reached; an unclaimed record goes back to SQS.';
    await run.webhooks.report(new WebhookError('inbox_failed', text, { cause, event, rawBody: message.rawBody, key, attempt: message.attempt }));
    return undefined;
  }
}

/** A record that is no webhook: to onError with its body, and back to SQS, whose redrive policy dead-letters it. */
function unparseable(error: WebhookError, record: SqsRecord, message: ReceivedMessage): WebhookError {
  const text = `${error.message} (SQS message ${record.messageId}, receive ${message.attempt}: it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.)`;
  const { issues, event } = error;
  return new WebhookError(error.code, text, { cause: error, issues, event, rawBody: message.rawBody, attempt: message.attempt, ...(message.key ? { key: message.key } : {}) });
}

/**
 * A record that cannot be read as a message (`why` says what is wrong with it): to onError, with its body where
 * it has one, and back to SQS as an unparseable one goes; one without a messageId cannot be sent back.
 */
async function unreadable(webhooks: Webhooks, record: SqsRecord, why: string, cause?: unknown): Promise<false> {
  const text = hasMessageId(record)
    ? `SQS message ${record.messageId} could not be read (${why}); it goes back to the queue, and to its dead-letter queue after maxReceiveCount receives.`
    : `An SQS record could not be read (${why}); without a messageId it cannot be named to SQS as failed, so it is not delivered again.`;
  const attempt = Number(record?.attributes?.ApproximateReceiveCount);
  const rawBody = typeof record?.body === 'string' ? record.body : undefined;
  const details = { cause, rawBody, ...(Number.isSafeInteger(attempt) && attempt >= 1 ? { attempt } : {}) };
  await webhooks.report(new WebhookError('invalid_envelope', text, details));
  return false;
}

/** The outcome, or undefined if the deadline came first. */
function withinDeadline(outcome: Promise<ReceiveOutcome>, deadline: number): Promise<ReceiveOutcome | undefined> {
  if (deadline === Infinity) return outcome;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
    void outcome.then((result) => {
      clearTimeout(timer);
      resolve(result);
    });
  });
}
