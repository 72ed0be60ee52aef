/**
 * HTTP Basic authentication of deliveries (spec 2.6 and 5: `useBasicAuth`, `username`, `password`).
 *
 * Why this is constant time: the header is parsed by `basic-auth` (scheme case-insensitive, base64 decoded
 * as UTF-8, split at the first colon), then the user name and password are each reduced to an HMAC-SHA256
 * digest under a key drawn at start-up. Digests are always 32 bytes, whatever the length of the guess,
 * and `crypto.timingSafeEqual` compares all 32 bytes whatever byte differs first. Every configured
 * credential is compared, with `&`/`|` instead of `&&`/`||`, so the time taken does not tell which
 * credential, nor which half of it, was wrong. The random key means the digests cannot be precomputed
 * by anyone who sees them.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import basicAuth from 'basic-auth';
import { WebhookError } from './errors.js';

/** The user name and password configured on the platform's webhook (`username`, `password`). */
export interface BasicAuthCredentials {
  username: string;
  password: string;
}

/** One pair, or several while rotating: any of them is accepted. */
export type BasicAuthOption = BasicAuthCredentials | readonly BasicAuthCredentials[];

const key = randomBytes(32);
const digest = (value: string): Buffer => createHmac('sha256', key).update(value, 'utf8').digest();

/** A function that tells whether an `Authorization` header carries one of the credentials. */
export type BasicAuthVerifier = (header: string | null | undefined) => boolean;

/** Checks the credentials once and returns a verifier that reuses their digests. */
export function createBasicAuthVerifier(credentials: BasicAuthOption): BasicAuthVerifier {
  const list = Array.isArray(credentials) ? credentials : [credentials as BasicAuthCredentials];
  if (list.length === 0) {
    throw new WebhookError('invalid_options', '`auth` lists no credentials; give at least one { username, password }.');
  }
  const expected = list.map((entry, index) => {
    if (typeof entry?.username !== 'string' || typeof entry?.password !== 'string') {
      throw new WebhookError('invalid_options', `\`auth[${index}]\` must be { username: string, password: string }.`);
    }
    if (entry.username === '' || entry.password === '') {
      throw new WebhookError('invalid_options', `\`auth[${index}]\` has an empty username or password.`);
    }
    if (entry.username.includes(':')) {
      // Basic auth splits at the first colon: such a user name could never match.
      throw new WebhookError('invalid_options', `\`auth[${index}].username\` must not contain ':'.`);
    }
    return { user: digest(entry.username), pass: digest(entry.password) };
  });

  return (header) => {
    if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return false;
    const given = basicAuth.parse(header);
    if (!given) return false;
    const user = digest(given.name);
    const pass = digest(given.pass);
    let match = 0;
    for (const pair of expected) {
      match |= Number(timingSafeEqual(user, pair.user)) & Number(timingSafeEqual(pass, pair.pass));
    }
    return match === 1;
  };
}

/** Headers longer than this are refused before decoding: no real credential is this long. */
const MAX_HEADER_LENGTH = 8 * 1024;

/**
 * Whether an `Authorization` header value carries one of the credentials.
 * For repeated checks, `createBasicAuthVerifier` computes the expected digests once.
 */
export function verifyBasicAuth(header: string | null | undefined, credentials: BasicAuthOption): boolean {
  return createBasicAuthVerifier(credentials)(header);
}
