/**
 * The walk over `GET /messages` for a window, as the platform documents it: `affix=append`, `limit=1000`,
 * `meta.next.sentAt` fed back as `fromTimestamp`. Messages of that second come again at the top of the next
 * page, so the ids of the edge second are remembered and dropped (only those: memory stays one second's
 * worth). A full page of nothing new (more than a page of messages in one second) steps on by `id`, after
 * the last one. A 429 is waited out for its `Retry-After`; other errors are the client's `ApiError`s.
 */
import { ApiError, type ApiMessage, type ChatClient, type MessageList } from '../api/index.js';
import { sleep } from '../platform/sleep.js';

export const PAGE_LIMIT = 1000;
/** Consecutive 429s waited out before the walk gives up with the last one. */
const MAX_THROTTLED = 20;
const DEFAULT_RETRY_AFTER_MS = 1_000;
/** A `Retry-After` longer than this is thrown, not waited: as the client's own `maxRetryAfterMs` default. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Ids of one second remembered at most: far past any platform's rate, so only a list that never ends gets here. */
export const MAX_SECOND_IDS = 100_000;

export interface WalkOptions {
  /** Epoch seconds, both ends included. */
  fromSecond: number;
  toSecond: number;
  signal?: AbortSignal;
  /** After each page: how many pages so far and how many 429s were waited out. */
  onPage?(pages: number, throttled: number): void;
}

export async function* walkMessages(chat: Pick<ChatClient, 'messages'>, options: WalkOptions): AsyncGenerator<ApiMessage, void, undefined> {
  let from = options.fromSecond;
  let after: string | undefined;
  let edge = { second: Number.NaN, ids: new Set<string>() };
  const counts = { pages: 0, throttled: 0 };
  for (;;) {
    const query = { fromTimestamp: from, toTimestamp: options.toSecond, affix: 'append' as const, limit: PAGE_LIMIT, ...(after === undefined ? {} : { id: after }) };
    const page = await listPage(chat, query, options.signal, counts);
    counts.pages++;
    let fresh = 0;
    for (const message of page.data) {
      const id = String(message.id);
      if (message.sentAt === edge.second && edge.ids.has(id)) continue;
      if (message.sentAt !== edge.second) edge = { second: message.sentAt, ids: new Set() };
      edge.ids.add(id);
      // A list that makes up new ids of one second for ever would hold them all, and never end.
      if (edge.ids.size > MAX_SECOND_IDS) throw stuck(`more than ${MAX_SECOND_IDS} messages in second ${edge.second}`);
      fresh++;
      yield message;
    }
    options.onPage?.(counts.pages, counts.throttled);
    const last = page.data.at(-1);
    const next = page.meta?.next;
    if (last === undefined || page.data.length < PAGE_LIMIT || next === null || next === undefined) return;
    const nextSecond = Number(next.sentAt ?? last.sentAt);
    const nextId = String(next.id ?? last.id);
    // A cursor behind the page it ends would list (and hand over) that page again, for ever; one past `until`
    // has nothing the window wants, however long a list that ignores toTimestamp goes on.
    if (!Number.isFinite(nextSecond) || nextSecond < last.sentAt) throw stuck(`meta.next.sentAt ${String(next.sentAt)} is not a second at or after the page's last message (${last.sentAt})`);
    if (nextSecond > options.toSecond) return;
    // Stepping by id already, and still nothing new: the list ignores `id` (whatever next.id it names).
    if (fresh === 0 && after !== undefined) throw stuck(`it does not move past id ${String(query.id)}: the same page came back`);
    // Nothing new on a full page: one second holds more than a page, and only `id` moves on within it (until
    // the walk reaches a later second, which starts without it).
    after = fresh === 0 || (after !== undefined && nextSecond === from) ? nextId : undefined;
    from = nextSecond;
  }
}

/** One page; a 429 is waited out (the client's own retries may already have waited some). */
async function listPage(chat: Pick<ChatClient, 'messages'>, query: Parameters<ChatClient['messages']['list']>[0], signal: AbortSignal | undefined, counts: { throttled: number }): Promise<MessageList> {
  for (let throttled = 0; ; throttled++) {
    try {
      return await chat.messages.list(query, signal ? { signal } : {});
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 429 || throttled >= MAX_THROTTLED) throw error;
      // Days of waiting are no throttle to sit out (and past 2^31 ms setTimeout fires at once: a tight loop).
      if ((error.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS) throw error;
      counts.throttled++;
      await sleep(error.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS, signal);
    }
  }
}

function stuck(why: string): ApiError {
  return new ApiError(`GET /messages: ${why}; stopped`, {
    code: 'pagination_loop',
    method: 'GET',
    url: '/messages',
    status: 200,
  });
}
