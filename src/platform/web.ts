/**
 * The runtime seam on web APIs only (Cloudflare Workers, browsers, any runtime without node:*): the same
 * contract as node.ts. Web Crypto's digests are asynchronous, and the receiver digests on its synchronous
 * path, so SHA-1 and SHA-256 are computed in JavaScript (sha.ts).
 */
import { sha1 as sha1Of, sha256 as sha256Of } from './sha.js';

export { MISSING_PEER, missingPeerMessage } from './peer.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

const bytesOf = (data: string | Uint8Array): Uint8Array => (typeof data === 'string' ? encoder.encode(data) : data);

/** SHA-256 of the data (text as UTF-8). */
export function sha256(data: string | Uint8Array): Uint8Array {
  return sha256Of(bytesOf(data));
}

/** SHA-256 of the data (text as UTF-8), base64. */
export function sha256Base64(data: string | Uint8Array): string {
  return base64(sha256Of(bytesOf(data)));
}

/** SHA-1 of the data (text as UTF-8), base64: a content key, not a security measure. */
export function sha1Base64(data: string | Uint8Array): string {
  return base64(sha1Of(bytesOf(data)));
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number);
  return btoa(binary);
}

/** Whether two byte arrays of the same length are equal, in time independent of where they differ. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) throw new RangeError('timingSafeEqual needs arrays of the same length.');
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/** `length` cryptographically random bytes. */
export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

/** A random 32-bit integer, for seeds. */
export function randomInt32(): number {
  return crypto.getRandomValues(new Int32Array(1))[0] as number;
}

/** A random UUID (v4). */
export function randomId(): string {
  return crypto.randomUUID();
}

/** The UTF-8 bytes of a text. */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The length of a text in UTF-8 bytes (a lone surrogate counts as U+FFFD, 3 bytes, as encoding makes it). */
export function utf8Length(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      length += 1;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: two units, four bytes.
      length += 2;
      i++;
    } else {
      length += 2;
    }
  }
  return length;
}

/**
 * The text of UTF-8 bytes, an invalid sequence read as U+FFFD (as framework body parsers decode). A byte
 * order mark is kept.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/**
 * Web runtimes have no synchronous loader: the entries needing a peer (the SQLite and Redis inboxes) are for
 * Node, Bun and Deno, which load node.ts. Says so, whether or not the peers are installed.
 */
export function requirePeers(entry: string, peers: readonly string[]): unknown[] {
  throw new Error(`${entry} runs on Node.js, Bun and Deno: it loads ${peers.join(' and ')} with require(), which this runtime lacks.`);
}

/** Web runtimes have no synchronous loading: the caller loads the module asynchronously (node.ts says why). */
export function loadOwnSync(_url: string): unknown {
  return undefined;
}
