/** Reading a node:http request body (node:http, Express and Fastify hand over node's request stream). */
import type { IncomingMessage } from 'node:http';
import { BodyArrival, type BodyReader } from '../../src/receive/index.js';

/**
 * A reader for the request stream that stops at the size limit: past `maxBytes` it stops listening and
 * hands over what it has (the receiver answers 413), so an oversized body is never buffered whole.
 * A stream that something else already consumed reads as empty instead of waiting forever.
 */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (maxBytes) => {
    if (req.readableEnded || req.destroyed) return new Uint8Array(0);
    const arrival = new BodyArrival();
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size > maxBytes) {
        // Whatever drains the rest of the request afterwards must not pile it up here.
        req.off('data', onData);
        req.pause();
        arrival.arrive(Buffer.concat(chunks, size));
      }
    };
    // The listeners stay once the body is read: removing four from every request would cost more than
    // leaving them to the request's garbage. 'close' comes after every request, so it checks first.
    req.on('data', onData);
    req.on('end', () => arrival.arrive(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    req.on('error', (cause) => arrival.fail(cause));
    req.on('close', () => {
      // An Error costs microseconds to make: only for a body that really did not arrive.
      if (arrival.pending) arrival.fail(new Error('The connection closed before the body was complete.'));
    });
    return arrival;
  };
}
