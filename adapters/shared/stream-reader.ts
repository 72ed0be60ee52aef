/** Reading a node:http request body (node:http, Express and Fastify hand over node's request stream). */
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { BodyArrival, type BodyReader } from '../../src/receive/index.js';

/** Where a stream being read keeps its reading: the listeners below are shared by every request. */
const READING = Symbol('chat-webhooks body reading');
/** Where a request's socket keeps the body being read from it now (null once read), for its 'close'. */
const SOCKET_READING = Symbol('chat-webhooks socket reading');

type ReadStream = IncomingMessage & { [READING]?: StreamBody };
type ReadSocket = Socket & { [SOCKET_READING]?: StreamBody | null };

/** A body arriving from a stream: what was read so far, and the limit. */
class StreamBody extends BodyArrival {
  /** The first chunk; the others, if any, in `rest` (most bodies of a few KB arrive in one). */
  first: Buffer | undefined;
  rest: Buffer[] | undefined;
  size = 0;

  constructor(
    readonly maxBytes: number,
    readonly stream: IncomingMessage,
  ) {
    super();
  }

  /** Everything read, in one buffer. */
  bytes(): Buffer {
    if (this.rest === undefined) return this.first ?? Buffer.alloc(0);
    return Buffer.concat([this.first as Buffer, ...this.rest], this.size);
  }
}

/**
 * A reader for the request stream that stops at the size limit: past `maxBytes` it stops listening and
 * hands over what it has (the receiver answers 413), so an oversized body is never buffered whole.
 * A stream that something else already consumed reads as empty instead of waiting forever.
 */
export function nodeBodyReader(req: IncomingMessage): BodyReader {
  return (maxBytes) => {
    if (req.readableEnded || req.destroyed) return new Uint8Array(0);
    const reading = new StreamBody(maxBytes, req);
    (req as ReadStream)[READING] = reading;
    // The listeners stay once the body is read: removing them from every request would cost more than
    // leaving them to the request's garbage. They are the same functions for every request (each finds its
    // reading on the stream), so a request makes no closures.
    req.on('data', onData);
    req.on('end', onEnd);
    const socket = req instanceof IncomingMessage ? (req.socket as ReadSocket | null) : null;
    if (socket instanceof Socket && !socket.destroyed && !socket[SOCKET_READING]?.pending) watchSocket(socket, reading);
    else {
      // Another stream (Fastify's preParsing may put a decompressor in the request's place), or a stand-in
      // socket (serverless-http's plain object), tells its own end. So does a pipelined request while another
      // on its connection is still read (a middleware may start their reads in any order): the socket keeps
      // one body, and the other's close would go unheard.
      req.on('error', onError);
      req.on('close', onClose);
    }
    return reading;
  };
}

/**
 * A request whose connection closes before its body is complete is destroyed with it: one 'close' listener
 * per connection, rather than an 'error' and a 'close' listener on each of its requests (adding those two
 * cost about 1 900 instructions a request at 50 keep-alive connections, callgrind).
 */
function watchSocket(socket: ReadSocket, reading: StreamBody): void {
  if (socket[SOCKET_READING] === undefined) socket.on('close', onSocketClose);
  socket[SOCKET_READING] = reading;
}

function onSocketClose(this: ReadSocket): void {
  const reading = this[SOCKET_READING];
  this[SOCKET_READING] = null;
  // node:http destroyed the request (with the connection's error) before this listener, added later, runs.
  if (reading?.pending) reading.fail(reading.stream.errored ?? new Error('The connection closed before the body was complete.'));
}

function onData(this: ReadStream, chunk: Buffer): void {
  const reading = this[READING] as StreamBody;
  reading.size += chunk.length;
  if (reading.first === undefined) reading.first = chunk;
  else (reading.rest ??= []).push(chunk);
  if (reading.size > reading.maxBytes) {
    // Whatever drains the rest of the request afterwards must not pile it up here.
    this.off('data', onData);
    this.pause();
    reading.arrive(reading.bytes());
  }
}

function onEnd(this: ReadStream): void {
  const reading = this[READING] as StreamBody;
  // The connection's next request is not this one: its socket no longer holds this body.
  const socket = this.socket as ReadSocket | null | undefined;
  if (socket?.[SOCKET_READING] === reading) socket[SOCKET_READING] = null;
  reading.arrive(reading.bytes());
}

function onError(this: ReadStream, cause: unknown): void {
  this[READING]?.fail(cause);
}

function onClose(this: ReadStream): void {
  const reading = this[READING] as StreamBody;
  // 'close' comes after every request. An Error costs microseconds to make: only for a body that really did
  // not arrive.
  if (reading.pending) reading.fail(new Error('The connection closed before the body was complete.'));
}
