/**
 * The normalized request and response every adapter translates to and from. Nothing here knows a framework.
 */
import type { WebhookBody } from './parse/parse.js';

/** Headers as node:http gives them (lower-case names), or any object with `get` (fetch `Headers`). */
export type HeaderSource =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | { get(name: string): string | null };

/** Who hears how a body still arriving ends: an object with both methods, so that listening makes no closure. */
export interface ArrivalListener {
  arrived(body: WebhookBody): void;
  failed(cause: unknown): void;
}

const PENDING = 0;
const ARRIVED = 1;
const FAILED = 2;

/**
 * A body still arriving, told to the receiver by callbacks: an adapter reading a stream calls `arrive` (or
 * `fail`) once, and the receiver answers right then. A promise would cost every request an allocation and a
 * turn of the microtask queue.
 */
export class BodyArrival {
  // The outcome as a state and a value rather than an object holding it: one allocation less per request.
  #state: typeof PENDING | typeof ARRIVED | typeof FAILED = PENDING;
  #value: unknown;
  #listener: ArrivalListener | undefined;

  /** True until `arrive` or `fail` was called. */
  get pending(): boolean {
    return this.#state === PENDING;
  }

  /** The whole body is here (or, past the size limit, what was read of it). Later calls are ignored. */
  arrive(body: WebhookBody): void {
    if (this.#state !== PENDING) return;
    this.#state = ARRIVED;
    this.#value = body;
    this.#listener?.arrived(body);
  }

  /** The body could not be read. Ignored after `arrive` or an earlier `fail`. */
  fail(cause: unknown): void {
    if (this.#state !== PENDING) return;
    this.#state = FAILED;
    this.#value = cause;
    this.#listener?.failed(cause);
  }

  /** For the receiver, once: calls back when the body arrives or fails (at once if it already did). */
  onArrival(arrived: (body: WebhookBody) => void, failed: (cause: unknown) => void): void {
    this.listen({ arrived, failed });
  }

  /** `onArrival` with both callbacks on one object (the receiver's own, which spares two closures a request). */
  listen(listener: ArrivalListener): void {
    if (this.#state === PENDING) this.#listener = listener;
    else if (this.#state === ARRIVED) listener.arrived(this.#value as WebhookBody);
    else listener.failed(this.#value);
  }
}

/**
 * Reads the request body. It must stop reading as soon as more than `maxBytes` bytes have arrived and may
 * then resolve with what it has: the receiver answers 413 for anything longer than `maxBytes`. A body already
 * in memory may be returned as is (no promise), which spares the request a turn of the microtask queue; a
 * body still arriving, as a promise or (cheaper) a `BodyArrival`. A reader that throws or rejects is answered
 * 400 (`invalid_json`), or, when what it threw is a `WebhookError`, with that error's status (to onError).
 */
export type BodyReader = (maxBytes: number) => WebhookBody | Promise<WebhookBody> | BodyArrival;

export interface WebhookRequest {
  method: string;
  headers: HeaderSource;
  /** The body, or a reader the receiver calls once the headers have passed its checks. */
  body?: WebhookBody | BodyReader | null;
}

export interface WebhookResponse {
  status: number;
  /** Lower-case names. Shared between responses: copy before changing. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Settles once every handler (and onError) for this request has finished. Never rejects. */
  done: Promise<void>;
}

/** One header's value; a repeated header's values are joined with ", " as HTTP allows. */
export function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value == null) {
    for (const key in record) {
      // Lengths first: most headers are not the one sought, and lower-casing each would cost every request.
      // An absent value under one spelling (a hand-built event map) does not hide a present one under another.
      if (key.length === name.length && record[key] != null && lowerCaseEquals(key, name)) {
        value = record[key];
        break;
      }
    }
  }
  // null too: an event map built by hand (a Lambda test event, say) may hold one where a header is absent.
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : value.join(', ');
}

type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The four headers admission reads, each through a property read of its own: one `record[name]` read shared by
 * four names goes megamorphic (a stub-cache probe, ~100 instructions each time). A value that is not one plain
 * string (absent, repeated, or `headers` has `get`) is read by `readHeader`, with everything it tells apart.
 */
export const admissionHeaders = {
  contentLength(headers: HeaderSource): string | undefined {
    const value = typeof (headers as { get?: unknown }).get === 'function' ? undefined : (headers as HeaderRecord)['content-length'];
    return typeof value === 'string' ? value : readHeader(headers, 'content-length');
  },
  contentType(headers: HeaderSource): string | undefined {
    const value = typeof (headers as { get?: unknown }).get === 'function' ? undefined : (headers as HeaderRecord)['content-type'];
    return typeof value === 'string' ? value : readHeader(headers, 'content-type');
  },
  contentEncoding(headers: HeaderSource): string | undefined {
    const value = typeof (headers as { get?: unknown }).get === 'function' ? undefined : (headers as HeaderRecord)['content-encoding'];
    return typeof value === 'string' ? value : readHeader(headers, 'content-encoding');
  },
  authorization(headers: HeaderSource): string | undefined {
    const value = typeof (headers as { get?: unknown }).get === 'function' ? undefined : (headers as HeaderRecord).authorization;
    return typeof value === 'string' ? value : readHeader(headers, 'authorization');
  },
};

/**
 * Whether `text` is as long as `lower` and lower-cases to it, without making the lower-case string (which
 * every request would pay for): ASCII is folded in place; other characters take the string route.
 */
export function lowerCaseEquals(text: string, lower: string): boolean {
  if (text.length !== lower.length) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return text.toLowerCase() === lower;
    // A-Z to a-z; anything else as it is.
    if ((code >= 0x41 && code <= 0x5a ? code + 0x20 : code) !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Whether a Content-Type names JSON in UTF-8: `application/json` or any `+json` type, in any letter case,
 * with no charset or a UTF-8 one. JSON on the wire is UTF-8 (RFC 8259); a body declared in another charset
 * would be decoded one way by a framework's parser and another way here, so it is refused everywhere.
 */
export function isJsonContentType(contentType: string): boolean {
  // A sender spells its Content-Type the same way every time: comparing with the last accepted spelling is a
  // memcmp, where folding `Application/json` a character at a time cost about 900 instructions a request.
  if (contentType === 'application/json' || contentType === lastJsonType) return true;
  if (!isJsonType(contentType)) return false;
  if (contentType.length <= MAX_REMEMBERED_TYPE) lastJsonType = contentType;
  return true;
}

/** The last Content-Type accepted as JSON (short ones only: a sender must not make every request compare kilobytes). */
let lastJsonType = 'application/json';
const MAX_REMEMBERED_TYPE = 64;

function isJsonType(contentType: string): boolean {
  // The platform sends `Application/json`: compared without lower-casing, which would make a string.
  if (lowerCaseEquals(contentType, 'application/json')) return true;
  const [mediaType = '', ...parameters] = contentType.split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) return false;
  return parameters.every((parameter) => {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') return true;
    const charset = value.trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    return charset === 'utf-8' || charset === 'utf8';
  });
}

/**
 * Whether a Content-Encoding leaves the body as is: empty, or `identity`. Some framework parsers inflate gzip
 * and others do not, so a compressed body is refused everywhere (RFC 7694: 415) rather than answered
 * differently by each.
 */
export function isIdentityEncoding(contentEncoding: string): boolean {
  return contentEncoding.trim() === '' || contentEncoding.trim().toLowerCase() === 'identity';
}
