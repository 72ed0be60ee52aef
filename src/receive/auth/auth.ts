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
 *
 * Credentials bound to apps (`appId`) admit a request only for those apps: the check answers with the apps
 * the matching credentials allow, and the receiver compares them with the envelope's `appId` once the body is
 * parsed (AppBinding). Which credential matched is known only after every one was compared, as before.
 */
import { randomBytes, sha256, timingSafeEqual } from '#platform';
import { appIdOf } from '../../events/index.js';
import { parseBasicCredentials } from './basic-credentials.js';
import { ConfigurationError } from '../../dispatch/errors.js';

/** The user name and password configured on the platform's webhook (`username`, `password`). */
export interface BasicAuthCredentials {
  username: string;
  password: string;
  /**
   * The app, or apps, whose events these credentials may deliver, for a receiver serving several apps: a
   * delivery whose envelope `appId` is another one, or missing, is refused with 403 (`app_mismatch`). Without
   * it, the credentials deliver for any app (as every entry of a plain rotation list does).
   * @example 'app-acme'
   */
  appId?: string | readonly string[];
}

/** One pair, or several while rotating: any of them is accepted (those bound to apps, for their apps only). */
export type BasicAuthOption = BasicAuthCredentials | readonly BasicAuthCredentials[];

// Drawn on first use, not when the module loads: Cloudflare Workers refuse random values in global scope.
let key: string | undefined;
const keyed = (value: string): Uint8Array =>
  sha256((key ??= Array.from(randomBytes(32), (byte) => byte.toString(16).padStart(2, '0')).join('')) + value);

/** How many distinct accepted header values are remembered: one per credential and encoding is plenty. */
const REMEMBERED_HEADERS = 8;

/**
 * A function that tells whether an `Authorization` header carries one of the credentials. For credentials
 * bound to apps it says only that: the app is checked against the delivery's body by the receiver.
 */
export type BasicAuthVerifier = (header: string | null | undefined) => boolean;

/** The apps a request's credentials may deliver for, checked against its envelope once the body is parsed. */
export class AppBinding {
  constructor(private readonly apps: ReadonlySet<string>) {}

  /** Whether the event's `appId` (read as keys read it: `7` is `"7"`) is one of the apps. */
  allows(event: { readonly appId?: unknown }): boolean {
    // A missing appId (undefined) is in no set of app ids.
    return this.apps.has(appIdOf(event) as string);
  }

  /** The apps of two matching credentials together. */
  with(other: AppBinding): AppBinding {
    return new AppBinding(new Set([...this.apps, ...other.apps]));
  }
}

/**
 * What a credential check answers: `false` (no credential matches), `true` (a credential for any app matches)
 * or the apps the matching credentials are bound to.
 */
export type Admitted = boolean | AppBinding;

/** `true` when a credential for any app matched: binding only ever narrows what a request may deliver. */
function admitting(soFar: Admitted, apps: true | AppBinding): Admitted {
  if (soFar === false || apps === true) return apps;
  return soFar === true ? true : soFar.with(apps);
}

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

/** The apps a credential is bound to, or `true` for any app; a binding that could admit nothing throws. */
function bindingOf(appId: unknown, path: string): true | AppBinding {
  if (appId === undefined) return true;
  const at = `${path}.appId`;
  const apps = typeof appId === 'string' ? [appId] : appId;
  if (!Array.isArray(apps) || apps.length === 0 || !apps.every((app) => typeof app === 'string' && app !== '')) {
    throw new ConfigurationError(
      at,
      `\`${at}\` must be an app id or a non-empty list of app ids (strings), got ${JSON.stringify(appId) ?? typeof appId}; ` +
        'leave it out for credentials that deliver for any app.',
    );
  }
  return new AppBinding(new Set(apps as string[]));
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
  const check = createCredentialCheck(credentials);
  return (header) => check(header) !== false;
}

/**
 * Checks the credentials once and returns the receiver's check: whether a header carries one of them, and
 * for which apps. Without any `appId` it answers `true` or `false`, and does nothing more than that.
 */
export function createCredentialCheck(credentials: BasicAuthOption): (header: string | null | undefined) => Admitted {
  const list = Array.isArray(credentials) ? credentials : [credentials as BasicAuthCredentials];
  if (list.length === 0) {
    throw new ConfigurationError('auth', '`auth` lists no credentials; give at least one { username, password }.');
  }
  const expected = list.map((entry, index) => {
    // A single pair is `auth`, a list's are `auth[0]`, `auth[1]`…: the name the developer wrote.
    const path = Array.isArray(credentials) ? `auth[${index}]` : 'auth';
    checkCredentials(entry, path);
    return { user: keyed(entry.username), pass: keyed(entry.password), apps: bindingOf(entry.appId, path) };
  });

  const longest = Math.max(...list.map(({ username, password }) => canonicalLength(`${username}:${password}`)));
  const remembers = (header: string) => header.length <= longest && CANONICAL.test(header);
  // Headers that passed, and what each admitted: the same header always matches the same credentials.
  // Kept as character codes: reading a typed array costs less than a second charCodeAt per character.
  const accepted: Uint16Array[] = [];
  const admitted: Array<true | AppBinding> = [];

  return (header) => {
    if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return false;
    let known: Admitted = false;
    // Every remembered header is compared; only a right one picks its answer.
    for (let i = 0; i < accepted.length; i++) if (sameCodes(header, accepted[i] as Uint16Array)) known = admitted[i] as true | AppBinding;
    if (known !== false) return known;

    const given = parseBasicCredentials(header);
    if (!given) return false;
    const user = keyed(given.name);
    const pass = keyed(given.pass);
    let result: Admitted = false;
    for (const pair of expected) {
      const match = Number(timingSafeEqual(user, pair.user)) & Number(timingSafeEqual(pass, pair.pass));
      // Taken only for a right credential: a wrong guess runs the same comparisons and nothing else.
      if (match === 1) result = admitting(result, pair.apps);
    }
    if (result === false) return false;
    if (accepted.length < REMEMBERED_HEADERS && remembers(header)) {
      accepted.push(codesOf(header));
      admitted.push(result);
    }
    return result;
  };
}

/**
 * Whether `given` equals `secret`, comparing every character of `secret` without an early exit, so the time
 * taken does not depend on where the two differ nor on the length of `given`.
 */
export function sameText(given: string, secret: string): boolean {
  return sameCodes(given, codesOf(secret));
}

/** The UTF-16 code units of a text. */
function codesOf(text: string): Uint16Array {
  const codes = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return codes;
}

/** `sameText` against a secret's code units: one character of `given` read per unit of the secret. */
function sameCodes(given: string, secret: Uint16Array): boolean {
  // A character past the end of `given` reads as NaN, which `^` turns into 0; the length check still fails it.
  let difference = given.length ^ secret.length;
  for (let i = 0; i < secret.length; i++) difference |= given.charCodeAt(i) ^ (secret[i] as number);
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
 * Whether an `Authorization` header value carries one of the credentials (bound to an app or not: the app is
 * the body's, which a receiver checks once it has parsed it). For repeated checks, `createBasicAuthVerifier`
 * computes the expected digests once.
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
