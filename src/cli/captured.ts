/**
 * What `listen` records of each delivery: what arrived, what the receiver answered, the receiver's
 * validation verdict, the idempotency key and whether it repeats an earlier delivery. One record is one
 * NDJSON line of `listen --json`, one entry of the live page, and one delivery for `replay`.
 */
import type { ParsedWebhook } from '../index.js';
import { keyFields } from './describe.js';
import { verdictOf, type Issue } from './issues.js';
import { deliveryKey } from './keys.js';

export interface Captured {
  seq: number;
  receivedAt: string;
  method: string;
  path: string;
  /** The receiver's answer. */
  status: number;
  /** `valid`; `unknown` (a trigger this version does not know: accepted); `invalid` (accepted, reported to
   * onError); `refused` (answered 4xx: bad credentials, not JSON, not an envelope...). */
  verdict: 'valid' | 'unknown' | 'invalid' | 'refused';
  /** The error code for invalid and refused deliveries. */
  code?: string;
  /** The receiver's answer text, for a refusal. */
  answer?: string;
  trigger?: string;
  fields: [string, string][];
  issues: Issue[];
  key?: string;
  /** A repeat of an accepted delivery: the receiver answered 200 and did not run the handlers again. */
  duplicate: boolean;
  /** The request's headers (lower-case names), credentials masked: `Basic ••••••`. */
  headers: Record<string, string>;
  /** The body exactly as received (UTF-8). */
  rawBody: string;
  forward?: { url: string; status?: number; ms: number; error?: string };
}

export interface Arrival {
  method: string;
  path: string;
  /** As received; masked here. */
  headers: Record<string, string>;
  status: number;
  answer: string;
  rawBody: string;
}

const REFUSAL_CODES: Record<number, string> = {
  401: 'unauthorized',
  403: 'app_mismatch',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  503: 'unavailable',
};

/** Headers whose value is a credential, or may be one: shown as `••••••` (after the scheme, for Authorization). */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|password|api-?key|session/i;
const MASK = '••••••';

export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const scheme = /^(authorization|proxy-authorization)$/i.test(name) ? /^\S+(?=\s)/.exec(value)?.[0] : undefined;
    masked[name] = SECRET_HEADER.test(name) ? (scheme ? `${scheme} ${MASK}` : MASK) : value;
  }
  return masked;
}

/**
 * Turns arrivals into records. Repeats are recognised as the receiver's inbox recognises them: by the same
 * key function, over the same window and with the same bound on how many keys are kept (the oldest go
 * first), counting only deliveries it stored (valid or unknown, not invalid).
 */
export class Recorder {
  #seq = 0;
  /** Key → when it was stored; Map order is the order they were stored in. */
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  #repeats(key: string, now: number): boolean {
    const stored = this.#seen.get(key);
    if (stored !== undefined && now - stored < this.windowMs) return true;
    // Re-inserted, so it moves to the end: the first key in the map is always the oldest.
    this.#seen.delete(key);
    this.#seen.set(key, now);
    for (const [oldest, at] of this.#seen) {
      if (this.#seen.size <= this.maxKeys && now - at < this.windowMs) break;
      this.#seen.delete(oldest);
    }
    return false;
  }

  /** How many keys it remembers (at most `maxKeys`). */
  get remembered(): number {
    return this.#seen.size;
  }

  record(arrival: Arrival): Captured {
    const verdict = verdictOf(arrival.rawBody);
    const accepted = arrival.status >= 200 && arrival.status < 300;
    const trigger = verdict.trigger;
    const event = verdict.event;
    const key = event !== undefined && accepted ? deliveryKey(event as unknown as ParsedWebhook, arrival.rawBody) : undefined;
    const duplicate = key !== undefined && verdict.valid && this.#repeats(key, Date.now());
    const base = {
      seq: ++this.#seq,
      receivedAt: new Date().toISOString(),
      method: arrival.method,
      path: arrival.path,
      status: arrival.status,
      ...(trigger !== undefined ? { trigger } : {}),
      fields: event ? keyFields(event) : [],
      ...(key !== undefined ? { key } : {}),
      duplicate,
      headers: maskHeaders(arrival.headers),
      rawBody: arrival.rawBody,
    };
    if (!accepted) {
      const code = REFUSAL_CODES[arrival.status] ?? (verdict.valid ? `http_${arrival.status}` : verdict.code);
      // Only a 400 is about the body itself; a 401, 405 or 415 says nothing of it.
      const issues = arrival.status === 400 && !verdict.valid ? verdict.issues : [];
      return { ...base, verdict: 'refused', code, answer: arrival.answer, issues };
    }
    if (!verdict.valid) return { ...base, verdict: 'invalid', code: verdict.code, issues: verdict.issues };
    return { ...base, verdict: verdict.known ? 'valid' : 'unknown', issues: [] };
  }
}
