/**
 * A local platform for reconcile's tests: `GET /v3/messages` on a real node:http server, as the platform
 * documents it. Query `fromTimestamp` (epoch seconds), `toTimestamp` (ignored without `fromTimestamp`),
 * `affix=append|prepend`, `limit` (1-1000, default 10), `id` (after this id), `category`; header `apikey`. The
 * answer is `{ data, meta: { current: { limit, count }, next: { affix, sentAt, id } } }`, ascending by `sentAt`
 * (then id) with `append`; `next` names the page's last message, so a walk feeding `next.sentAt` back as
 * `fromTimestamp` gets that second's messages again. `throttle(n, seconds)` answers the next n requests 429
 * `ERR_TOO_MANY_REQUESTS` with `Retry-After`. Ids are numeric strings.
 *
 * `messageStream` makes what the platform would have: a stream of sends, edits and deletes (each an event, its
 * webhook body, and the message the list returns for it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ListedMessage = Record<string, unknown> & { id: string; sentAt: number };

export interface ChatPlatform {
  /** `http://127.0.0.1:<port>/v3`: a chat client's `baseUrl`. */
  baseUrl: string;
  apiKey: string;
  /** Every message the list holds; tests may push more. */
  messages: ListedMessage[];
  /** The query of every `GET /messages`, in order (429s included). */
  queries: URLSearchParams[];
  /** Answers the next `count` requests 429 with `Retry-After: <seconds>`. */
  throttle(count: number, seconds: number): void;
  close(): Promise<void>;
}

export async function startChatPlatform(messages: ListedMessage[] = [], apiKey = 'test-api-key'): Promise<ChatPlatform> {
  const queries: URLSearchParams[] = [];
  const throttled = { count: 0, seconds: 1 };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/v3/messages') return send(res, 404, { error: { code: 'ERR_NOT_FOUND', message: 'Not found.' } });
    queries.push(url.searchParams);
    if (req.headers.apikey !== apiKey) return send(res, 401, { error: { code: 'AUTH_ERR_APIKEY_NOT_FOUND', message: 'Wrong apikey.' } });
    if (throttled.count > 0) {
      throttled.count--;
      return send(res, 429, { error: { code: 'ERR_TOO_MANY_REQUESTS', message: 'Too many requests.' } }, { 'retry-after': String(throttled.seconds) });
    }
    answerList(req, res, url.searchParams, platform.messages);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const platform: ChatPlatform = {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`,
    apiKey,
    messages,
    queries,
    throttle(count, seconds) {
      Object.assign(throttled, { count, seconds });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return platform;
}

function answerList(_req: IncomingMessage, res: ServerResponse, query: URLSearchParams, all: ListedMessage[]): void {
  const limit = query.has('limit') ? Number(query.get('limit')) : 10;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    return send(res, 400, { error: { code: 'ERR_BAD_REQUEST', message: 'limit is 1 to 1000.' } });
  }
  const affix = query.get('affix') === 'prepend' ? 'prepend' : 'append';
  const from = query.has('fromTimestamp') ? Number(query.get('fromTimestamp')) : undefined;
  // Documented: toTimestamp is ignored without fromTimestamp.
  const to = from !== undefined && query.has('toTimestamp') ? Number(query.get('toTimestamp')) : undefined;
  const after = query.has('id') ? Number(query.get('id')) : undefined;
  const category = query.get('category');
  const sign = affix === 'append' ? 1 : -1;
  const matching = all
    .filter((m) => (from === undefined || m.sentAt >= from) && (to === undefined || m.sentAt <= to))
    .filter((m) => (after === undefined || (sign > 0 ? Number(m.id) > after : Number(m.id) < after)) && (category === null || m.category === category))
    .sort((a, b) => sign * (a.sentAt - b.sentAt || Number(a.id) - Number(b.id)));
  const data = matching.slice(0, limit);
  const last = data.at(-1);
  const next = data.length === limit && last ? { affix, sentAt: last.sentAt, id: last.id } : undefined;
  send(res, 200, { data, meta: { current: { limit, count: data.length }, ...(next ? { next } : {}) } });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** One event of a stream: what the webhook carried, and the message the list returns for it. */
export interface StreamEvent {
  trigger: 'message_sent' | 'message_edited' | 'message_deleted';
  /** The message's id (an edit's or a delete's own action message). */
  id: string;
  sentAt: number;
  /** The webhook body the platform would have POSTed. */
  body: string;
}

export interface StreamOptions {
  /** Epoch seconds of the first event. */
  start: number;
  seconds: number;
  /** Events per second on average (several often share one second). */
  perSecond?: number;
  seed?: number;
  appId?: string;
  region?: string;
  webhook?: string;
}

/**
 * A stream of sends, edits and deletes over `seconds` (timestamps, not real time): about half sends, the rest
 * edits and deletes of earlier messages. The list holds every message as it is now (an edited message's text
 * and `editedAt`, a deleted one's `deletedAt`), and every action message.
 */
export function messageStream(options: StreamOptions): { events: StreamEvent[]; listed: ListedMessage[] } {
  const { start, seconds, perSecond = 2, appId = 'app1', region = 'eu', webhook = 'wh_main' } = options;
  let seed = options.seed ?? 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  let nextId = 1000;
  const events: StreamEvent[] = [];
  const sent: ListedMessage[] = [];
  const actions: ListedMessage[] = [];
  const user = (uid: string) => ({ entity: { uid, name: uid, status: 'online', role: 'default' }, entityType: 'user' });
  for (let second = start; second < start + seconds; second++) {
    const count = Math.floor(random() * perSecond * 2);
    for (let i = 0; i < count; i++) {
      const id = String(nextId++);
      const live = sent.filter((m) => m.deletedAt === undefined);
      const pick = random();
      if (pick < 0.5 || live.length === 0) {
        const message: ListedMessage = {
          id, conversationId: 'u1_user_u2', sender: 'u1', receiverType: 'user', receiver: 'u2', category: 'message', type: 'text',
          data: { text: `message ${id}`, entities: { sender: user('u1'), receiver: user('u2') } }, sentAt: second, updatedAt: second,
        };
        sent.push(message);
        events.push(event('message_sent', message));
        continue;
      }
      const target = live[Math.floor(random() * live.length)]!;
      const action = pick < 0.8 ? 'edited' : 'deleted';
      if (action === 'edited') Object.assign(target, { editedAt: second, editedBy: 'u1', updatedAt: second, data: { ...(target.data as object), text: `edited at ${second}` } });
      else Object.assign(target, { deletedAt: second, deletedBy: 'u1', updatedAt: second });
      const message: ListedMessage = {
        id, conversationId: 'u1_user_u2', sender: 'u1', receiverType: 'user', receiver: 'u2', category: 'action', type: 'message',
        data: { action, entities: { by: user('u1'), for: user('u2'), on: { entity: structuredClone(target), entityType: 'message' } } },
        sentAt: second, updatedAt: second,
      };
      actions.push(message);
      events.push(event(action === 'edited' ? 'message_edited' : 'message_deleted', message));
    }
  }
  return { events, listed: [...sent, ...actions] };

  function event(trigger: StreamEvent['trigger'], message: ListedMessage): StreamEvent {
    const body = JSON.stringify({ trigger, data: { message: structuredClone(message) }, appId, region, webhook });
    return { trigger, id: message.id, sentAt: message.sentAt, body };
  }
}
