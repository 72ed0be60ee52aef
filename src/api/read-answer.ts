/**
 * Reads an answer's body with a size cap, so a service (or whatever answers in its place) cannot make the
 * client buffer more than `maxBytes`: a declared `Content-Length` past the cap is refused before a byte is
 * read, and a body that streams past it is refused as soon as it does. Either way the request's controller
 * is aborted, which closes the connection, so the rest is never downloaded.
 */

/** The default of `maxResponseBytes`: 10 MiB, far above any answer of the platform's REST interfaces. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10_485_760;

/** Thrown inside an attempt when the answer passes the cap; the transport turns it into an `ApiError`. */
export class AnswerTooLarge extends Error {
  constructor(readonly maxBytes: number, readonly status: number, readonly declaredBytes?: number) {
    super(`the answer is longer than ${maxBytes} bytes`);
  }
}

/** The body as text (UTF-8), at most `maxBytes` of it; rejects with `AnswerTooLarge` past that. */
export async function readCapped(response: Response, maxBytes: number, controller: AbortController): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) throw stop(controller, new AnswerTooLarge(maxBytes, response.status, declared));
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      chunks.length = 0;
      const error = stop(controller, new AnswerTooLarge(maxBytes, response.status));
      void reader.cancel(error).catch(() => undefined);
      throw error;
    }
    chunks.push(value);
  }
  return decode(chunks, total);
}

/** Drops an answer nobody will read (a redirect's body), closing its stream. */
export function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}

function stop(controller: AbortController, error: AnswerTooLarge): AnswerTooLarge {
  controller.abort(error);
  return error;
}

function decode(chunks: Uint8Array[], total: number): string {
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(joined);
}
