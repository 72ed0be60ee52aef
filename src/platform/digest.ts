/** SHA digests through node:crypto's one-shot `hash` where it exists (Node ≥ 20.12), which is about twice as fast. */
import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'buffer' | 'base64') => Buffer | string;
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export function digest(algorithm: 'sha1' | 'sha256', data: string | Uint8Array): Buffer;
export function digest(algorithm: 'sha1' | 'sha256', data: string | Uint8Array, encoding: 'base64'): string;
export function digest(algorithm: 'sha1' | 'sha256', data: string | Uint8Array, encoding: 'buffer' | 'base64' = 'buffer') {
  if (oneShot) return oneShot(algorithm, data, encoding);
  const result = crypto.createHash(algorithm).update(data).digest();
  return encoding === 'base64' ? result.toString('base64') : result;
}
