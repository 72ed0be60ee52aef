/**
 * HTTP Basic authentication of deliveries (spec 2.6 and 5: `useBasicAuth`, `username`, `password`).
 *
 * Why this is constant time: the header is parsed (basic-credentials.ts: scheme case-insensitive, base64
 * decoded as UTF-8, split at the first colon), then the user name and password are each reduced to a SHA-256
 * digest keyed with a secret drawn on first use. Digests are always 32 bytes, whatever the length of the
 * guess, and `timingSafeEqual` compares all 32 bytes whatever byte differs first. Every configured
 * credential is compared, with `&`/`|` instead of `&&`/`||`, so the time taken does not tell which
 * credential, nor which half of it, was wrong. The secret key means the digests cannot be precomputed
 * by anyone who sees them.
 *
 * The platform sends the same header with every delivery, so each whole header value that passed is
 * remembered (a few at most) and a later header is first compared with them by `sameText`, which has no
 * early exit: its time depends on the remembered value's length only, never on the guess nor on where it
 * differs. A header that matches none takes the full path above, so the shortcut only ever changes how fast
 * a right answer comes, and costs a wrong guess the same few nanoseconds every time.
 *
 * Only the canonical spelling (`Basic <base64>`, no extra space, no longer than a credential's encoding) is
 * remembered: basic-auth accepts any run of spaces and any case of the scheme, and remembering those
 * variants would let one sender fill the list with 8 KiB values that every later request reads in full.
 */
import { randomBytes, sha256, timingSafeEqual } from '#platform';
import { parseBasicCredentials } from './basic-credentials.js';
import { ConfigurationError } from './errors.js';

/** The user name and password configured on the platform's webhook (`username`, `password`). */
export interface BasicAuthCredentials {
  username: string;
  password: string;
}

/** One pair, or several while rotating: any of them is accepted. */
export type BasicAuthOption = BasicAuthCredentials | readonly BasicAuthCredentials[];

// Drawn on first use, not when the module loads: Cloudflare Workers refuse random values in global scope.
let key: string | undefined;
const keyed = (value: string): Uint8Array =>
  sha256((key ??= Array.from(randomBytes(32), (byte) => byte.toString(16).padStart(2, '0')).join('')) + value);

/** How many distinct accepted header values are remembered: one per credential and encoding is plenty. */
const REMEMBERED_HEADERS = 8;

/** A function that tells whether an `Authorization` header carries one of the credentials. */
export type BasicAuthVerifier = (header: string | null | undefined) => boolean;

/**
 * Throws a `ConfigurationError` naming the field at fault. Most often a credential is missing because the
 * environment variable meant to hold it is not set, so that is what the message suggests.
 */
function checkCredentials(entry: unknown, path: string): asserts entry is BasicAuthCredentials {
  if (entry === null || typeof entry !== 'object') {
    throw new ConfigurationError(path, `\`${path}\` must be { username, password }, got ${entry === null ? 'null' : typeof entry}.`);
  }
  for (const field of ['username', 'password'] as const) {
    const value = (entry as Record<string, unknown>)[field];
    const at = `${path}.${field}`;
    if (value === undefined || value === '') {
      throw new ConfigurationError(
        at,
        `\`${at}\` is ${value === undefined ? 'missing' : 'empty'}: give the ${field} configured on the webhook ` +
          '(if it comes from an environment variable, that variable is not set).',
      );
    }
    if (typeof value !== 'string') throw new ConfigurationError(at, `\`${at}\` must be a string, got ${typeof value}.`);
  }
  if ((entry as BasicAuthCredentials).username.includes(':')) {
    // Basic auth splits at the first colon: such a user name could never match.
    throw new ConfigurationError(`${path}.username`, `\`${path}.username\` must not contain ':'.`);
  }
}

/**
 * Checks the credentials once and returns a verifier that reuses their digests.
 *
 * @example
 * ```ts
 * import { createBasicAuthVerifier } from 'chat-webhooks';
 *
 * const verify = createBasicAuthVerifier({ username: 'app', password: process.env.WEBHOOK_PASSWORD! });
 * verify('Basic YXBwOnMzY3JldA=='); // false unless the password is s3cret
 * verify(request.headers.get('authorization'));
 * ```
 */
export function createBasicAuthVerifier(credentials: BasicAuthOption): BasicAuthVerifier {
  const list = Array.isArray(credentials) ? credentials : [credentials as BasicAuthCredentials];
  if (list.length === 0) {
    throw new ConfigurationError('auth', '`auth` lists no credentials; give at least one { username, password }.');
  }
  const expected = list.map((entry, index) => {
    // A single pair is `auth`, a list's are `auth[0]`, `auth[1]`…: the name the developer wrote.
    checkCredentials(entry, Array.isArray(credentials) ? `auth[${index}]` : 'auth');
    return { user: keyed(entry.username), pass: keyed(entry.password) };
  });

  const longest = Math.max(...list.map(({ username, password }) => canonicalLength(`${username}:${password}`)));
  const remembers = (header: string) => header.length <= longest && CANONICAL.test(header);
  const accepted: string[] = [];

  return (header) => {
    if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return false;
    let known = 0;
    for (const seen of accepted) known |= Number(sameText(header, seen));
    if (known === 1) return true;

    const given = parseBasicCredentials(header);
    if (!given) return false;
    const user = keyed(given.name);
    const pass = keyed(given.pass);
    let match = 0;
    for (const pair of expected) {
      match |= Number(timingSafeEqual(user, pair.user)) & Number(timingSafeEqual(pass, pair.pass));
    }
    if (match !== 1) return false;
    if (accepted.length < REMEMBERED_HEADERS && remembers(header)) accepted.push(header);
    return true;
  };
}

/**
 * Whether `given` equals `secret`, comparing every character of `secret` without an early exit, so the time
 * taken does not depend on where the two differ nor on the length of `given`.
 */
export function sameText(given: string, secret: string): boolean {
  // A character past the end of `given` reads as NaN, which `^` turns into 0; the length check still fails it.
  let difference = given.length ^ secret.length;
  for (let i = 0; i < secret.length; i++) difference |= given.charCodeAt(i) ^ secret.charCodeAt(i);
  return difference === 0;
}

/** The one spelling of an accepted header that is remembered. */
const CANONICAL = /^Basic [A-Za-z0-9+/]+={0,2}$/;

/** Length of `Basic <base64 of the UTF-8 bytes of text>`. */
function canonicalLength(text: string): number {
  return 'Basic '.length + 4 * Math.ceil(new TextEncoder().encode(text).byteLength / 3);
}

/** Headers longer than this are refused before decoding: no real credential is this long. */
const MAX_HEADER_LENGTH = 8 * 1024;

/**
 * Whether an `Authorization` header value carries one of the credentials.
 * For repeated checks, `createBasicAuthVerifier` computes the expected digests once.
 *
 * @example
 * ```ts
 * import { verifyBasicAuth } from 'chat-webhooks';
 *
 * const credentials = { username: 'app', password: 's3cret' };
 * verifyBasicAuth('Basic YXBwOnMzY3JldA==', credentials); // true: app:s3cret
 * verifyBasicAuth(request.headers.get('authorization'), credentials);
 * ```
 */
export function verifyBasicAuth(header: string | null | undefined, credentials: BasicAuthOption): boolean {
  return createBasicAuthVerifier(credentials)(header);
}
