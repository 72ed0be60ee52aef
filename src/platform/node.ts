/**
 * The runtime seam, Node's side (also what Bun and Deno load): digests, random values, UTF-8. Chosen through
 * package.json's `imports` (`#platform`); web.ts is the same contract on web APIs only.
 */
// Buffer is the global one (Node, Bun and Deno all have it): importing node:buffer as an ES module builds its
// facade, which reads every export (Blob, File and the rest load their internals), ~1 ms of a cold start.
import * as crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { missingPeerError, notInstalled } from './peer.js';

export { MISSING_PEER, missingPeerMessage } from './peer.js';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'buffer' | 'base64') => Buffer | string;
/** node:crypto's one-shot `hash` (Node >= 20.12) is about twice as fast as createHash. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

/** SHA-256 of the data (text as UTF-8). */
export function sha256(data: string | Uint8Array): Uint8Array {
  if (oneShot) return oneShot('sha256', data, 'buffer') as Buffer;
  return crypto.createHash('sha256').update(data).digest();
}

/** SHA-256 of the data (text as UTF-8), base64. */
export function sha256Base64(data: string | Uint8Array): string {
  if (oneShot) return oneShot('sha256', data, 'base64') as string;
  return crypto.createHash('sha256').update(data).digest('base64');
}

/** SHA-1 of the data (text as UTF-8), base64: a content key, not a security measure. */
export function sha1Base64(data: string | Uint8Array): string {
  if (oneShot) return oneShot('sha1', data, 'base64') as string;
  return crypto.createHash('sha1').update(data).digest('base64');
}

/** Whether two byte arrays of the same length are equal, in time independent of where they differ. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return crypto.timingSafeEqual(a, b);
}

/** `length` cryptographically random bytes. */
export function randomBytes(length: number): Uint8Array {
  return crypto.randomBytes(length);
}

/** A random 32-bit integer, for seeds. */
export function randomInt32(): number {
  return crypto.randomBytes(4).readInt32LE(0);
}

/** A random UUID (v4). */
export function randomId(): string {
  return crypto.randomUUID();
}

/** The UTF-8 bytes of a text. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text);
}

/** The length of a text in UTF-8 bytes. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text);
}

/**
 * The text of UTF-8 bytes, an invalid sequence read as U+FFFD (as framework body parsers decode). A byte
 * order mark is kept.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // UTF-8 is the default; naming it costs an encoding lookup on every request.
  return view.toString();
}

// Made at the first load, not at import: createRequire resolves this file's path and builds a module, a cost a
// receiver's cold start would pay for nothing (it loads no peer and explains no rejection until one comes).
let requireFromHere: NodeJS.Require | undefined;
const load = (specifier: string): unknown => (requireFromHere ??= createRequire(import.meta.url))(specifier);

/**
 * Loads an entry's optional peer dependencies (synchronously, so an entry can load them as it is imported):
 * when any is not installed, throws one error naming every missing one and how to install them
 * (`chat-webhooks/sqlite needs its optional peer better-sqlite3: npm install better-sqlite3`, code
 * MISSING_PEER) instead of Node's "Cannot find module". A peer that is installed but fails to load (a native
 * addon built for another Node) throws its own error. Peers resolve from this package's folder, as an
 * `import` in its files would.
 */
export function requirePeers(entry: string, peers: readonly string[]): unknown[] {
  const missing: string[] = [];
  let firstCause: unknown;
  const loaded = peers.map((peer) => {
    try {
      return load(peer) as unknown;
    } catch (error) {
      if (!notInstalled(error, peer)) throw error;
      missing.push(peer);
      firstCause ??= error;
      return undefined;
    }
  });
  if (missing.length > 0) throw missingPeerError(entry, missing, firstCause);
  return loaded;
}

/**
 * Loads one of this package's own modules synchronously, by URL (an ES module through Node's require(), from
 * 20.19 on), or answers undefined where it cannot (older Node, a bundle that left the file behind): the caller
 * then loads it asynchronously. For the parts only a rejection needs (zod's explanation of it), kept off the
 * happy path's imports.
 */
export function loadOwnSync(url: string): unknown {
  try {
    return load(new URL(url).pathname) as unknown;
  } catch {
    return undefined;
  }
}
