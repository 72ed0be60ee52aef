/**
 * Reading the user name and password out of an `Authorization: Basic …` header (RFC 7617), without Node's
 * Buffer: the scheme in any letter case, base64 decoded as UTF-8, split at the first colon. It accepts
 * exactly what the `basic-auth` package (used before, on Node) accepts, which test/receive/basic-credentials
 * .test.ts checks property-based.
 */

const CREDENTIALS = /^ *(?:[Bb][Aa][Ss][Ii][Cc]) +([A-Za-z0-9._~+/-]+=*) *$/;
/** `.` stops at line breaks, as in basic-auth: a decoded value with one is no credential. */
const USER_PASS = /^([^:]*):(.*)$/;

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Value of each base64 character (both alphabets); characters missing here are skipped, as Node's decoder
 * skips them. Looked up by character rather than char code: auth's tests count charCodeAt calls to measure
 * the constant-time comparison, and decoding must not blur that count.
 */
const SEXTETS: Readonly<Record<string, number>> = Object.freeze({
  ...Object.fromEntries('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').map((c, i) => [c, i])),
  '-': 62,
  _: 63,
});

/**
 * Decodes base64 as Node's `Buffer.from(text, 'base64')` does: both alphabets, skipping other characters.
 * Node stops at the first `=`; CREDENTIALS lets `=` through only as trailing padding, which is skipped here.
 */
function decodeBase64(text: string): Uint8Array {
  // Six bits a character: the bytes never outnumber the characters.
  const bytes = new Uint8Array(text.length);
  let length = 0;
  let bits = 0;
  let count = 0;
  for (const char of text) {
    const sextet = SEXTETS[char];
    if (sextet === undefined) continue;
    bits = ((bits << 6) | sextet) & 0xffffff;
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes[length++] = (bits >>> count) & 0xff;
    }
  }
  return bytes.subarray(0, length);
}

/** The credentials a Basic `Authorization` header carries, or undefined when it carries none. */
export function parseBasicCredentials(header: string): { name: string; pass: string } | undefined {
  const match = CREDENTIALS.exec(header);
  if (!match) return undefined;
  const userPass = USER_PASS.exec(decoder.decode(decodeBase64(match[1] as string)));
  if (!userPass) return undefined;
  return { name: userPass[1] as string, pass: userPass[2] as string };
}
