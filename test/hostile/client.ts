/** A raw HTTP/1.1 client over a socket: hostile requests are ones a polite client library will not send. */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Request bytes the client managed to write before the server answered or closed. */
  sent: number;
}

/**
 * Writes `head` then the body chunks (a Buffer, or a generator for streamed bodies) and reads the
 * response. Stops writing as soon as a response arrives or the socket closes.
 */
export function rawRequest(
  port: number,
  head: string,
  body?: Buffer | Iterable<Buffer>,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received: Buffer = Buffer.alloc(0);
    let sent = 0;
    let answered = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${timeoutMs} ms`));
    }, timeoutMs);

    const finish = () => {
      clearTimeout(timer);
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return reject(new Error(`incomplete response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let payload = received.subarray(end + 4);
      if (headers['transfer-encoding'] === 'chunked') payload = dechunk(payload);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: payload.toString('utf8'), sent });
    };

    socket.on('data', (chunk) => {
      answered = true;
      received = Buffer.concat([received, chunk]);
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      if (length && received.length >= end + 4 + Number(length[1])) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', () => {
      if (received.length > 0) finish();
      else {
        clearTimeout(timer);
        reject(new Error('connection closed without a response'));
      }
    });
    socket.on('error', () => {
      /* the server may reset a connection it refused mid-body; the response, if any, is already read */
    });

    socket.on('connect', async () => {
      socket.write(head);
      sent += Buffer.byteLength(head);
      if (!body) return;
      const chunks = Buffer.isBuffer(body) ? [body] : body;
      for (const chunk of chunks) {
        if (answered || socket.destroyed) break;
        const flushed = socket.write(chunk);
        sent += chunk.length;
        if (!flushed) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    });
  });
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd === -1) break;
    const size = parseInt(data.subarray(offset, lineEnd).toString(), 16);
    if (!size) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** A complete request with a Content-Length. */
export function request(options: { method?: string; headers?: Record<string, string>; body?: Buffer | string }): [string, Buffer] {
  const body = Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body ?? '', 'utf8');
  const headers = { host: '127.0.0.1', 'content-length': String(body.length), connection: 'close', ...options.headers };
  const head =
    `${options.method ?? 'POST'} /webhooks HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  return [head, body];
}
