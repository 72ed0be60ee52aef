/** A fetch `Request`'s body as the receiver reads it, for the fetch and Hono adapters. */
import type { BodyReader } from '../../src/receive/index.js';

/**
 * Reads the request stream up to the limit: past `maxBytes` it cancels the stream and resolves with what it
 * has (the receiver answers 413), so an oversized body is never pulled whole.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { fetchBodyReader } from 'chat-webhooks/fetch';
 *
 * const webhooks = createWebhooks({ auth: false });
 * // Writing an adapter of your own for a Fetch API host:
 * async function answer(request: Request): Promise<Response> {
 *   const { status, headers, body } = await webhooks.handle({ method: request.method, headers: request.headers, body: fetchBodyReader(request) });
 *   return new Response(body, { status, headers });
 * }
 * ```
 */
export function fetchBodyReader(request: Request): BodyReader {
  return async (maxBytes) => {
    // A body something else already read resolves empty instead of throwing on a locked stream.
    if (!request.body || request.bodyUsed) return new Uint8Array(0);
    const reader = request.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes) {
        // Not awaited: a source may take its time to tear down, and the answer does not depend on it.
        reader.cancel().catch(() => undefined);
        break;
      }
    }
    return concat(chunks, size);
  };
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
