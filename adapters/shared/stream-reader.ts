/** Reading a node:http request body (node:http, Express and Fastify hand over node's request stream). */
import type { IncomingMessage } from 'node:http';
import type { BodyReader } from '../../src/receive/index.js';

/**
 * A reader for the request stream that stops at the size limit: past `maxBytes` it stops listening and
 * resolves with what it has (the receiver answers 413), so an oversized body is never buffered whole.
 * A stream that something else already consumed resolves empty instead of waiting forever.
 */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (maxBytes) =>
    new Promise<Uint8Array>((resolve, reject) => {
      if (req.readableEnded || req.destroyed) {
        resolve(new Uint8Array(0));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (body: Buffer) => {
        settled = true;
        resolve(body);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
        if (size > maxBytes) {
          // Whatever drains the rest of the request afterwards must not pile it up here.
          req.off('data', onData);
          req.pause();
          finish(Buffer.concat(chunks, size));
        }
      };
      // The listeners stay once the body is read: removing four from every request would cost more than
      // leaving them to the request's garbage. 'close' comes after every request, so it checks first.
      req.on('data', onData);
      req.on('end', () => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
      req.on('error', reject);
      req.on('close', () => {
        if (!settled) reject(new Error('The connection closed before the body was complete.'));
      });
    });
}
