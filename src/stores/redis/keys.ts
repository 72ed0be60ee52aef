/**
 * The Redis inbox's data model: every key under `<prefix>:inbox:`. The inbox owns these (its scripts are
 * the only writers); they are not a public interface, but they are what to look at with redis-cli.
 *
 * - `k_<hash>`: a hash per entry (pending, running or dead): `data` (JSON: key, trigger, rawBody, receivedAt,
 *   traceparent), `attempts`, `token` (the lease holder's), `error` (the last one). `<hash>` is the
 *   idempotency key's SHA-256 in base64: keys can be long, and any text.
 * - `seen:<hash>`: the marker that remembers the key for `windowMs` from its put; finished entries leave only it.
 * - `pending`: list of the job ids due now, oldest first; `retries`: sorted set by due time; `running`: by
 *   lease end; `dead`: by time of death.
 * - `stats:done`: how many finished; `recent-done`: the last 1 000 finished, as JSON records.
 * - `lock:<name>`: catch-up's leased lock (its holder, expiring with the lease); `mark:<name>`: a high-water mark.
 */
import { sha256Base64 } from '#platform';

export interface InboxKeys {
  /** What every key starts with: the scripts name jobs and markers from it. */
  base: string;
  pending: string;
  retries: string;
  running: string;
  dead: string;
  doneCount: string;
  recentDone: string;
  markerPattern: string;
  job(id: string): string;
  marker(hash: string): string;
  lock(name: string): string;
  mark(name: string): string;
}

/**
 * `text` as a SCAN MATCH pattern that matches only itself: a prefix `g?` unescaped would match prefix `gx`'s
 * markers, and purging done would forget that other inbox's finished keys (their retries handled twice).
 */
const globLiteral = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

export function inboxKeys(prefix: string): InboxKeys {
  const base = `${prefix}:inbox:`;
  return {
    base,
    pending: `${base}pending`,
    retries: `${base}retries`,
    running: `${base}running`,
    dead: `${base}dead`,
    doneCount: `${base}stats:done`,
    recentDone: `${base}recent-done`,
    markerPattern: `${globLiteral(base)}seen:*`,
    job: (id) => `${base}${id}`,
    marker: (hash) => `${base}seen:${hash}`,
    lock: (name) => `${base}lock:${name}`,
    mark: (name) => `${base}mark:${name}`,
  };
}

/** The key's hash, which names its marker. */
export const hashOf = (key: string): string => sha256Base64(key);
/** The job id of a key's hash (the `k_` keeps job ids apart from the inbox's other keys). */
export const jobIdOf = (hash: string): string => `k_${hash}`;

/** A job's `data`: the event is not stored beside its raw body (src/delivery/stored-event.ts). */
export interface JobData {
  key: string;
  trigger: string;
  rawBody: string;
  receivedAt: number;
  /** Only when telemetry stored one. */
  traceparent?: string | undefined;
}
