/**
 * `serve <module>`: runs a Lambda handler module behind a local HTTP server for development, each request
 * handed to it as the API Gateway HTTP API (payload 2.0) event Lambda would get, its result answered as API
 * Gateway would answer it. So `send`, `listen --forward` and curl reach a function without deploying it.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { escapeControl as safe } from '../index.js';
import { EXIT_OK, failure, usageError } from './errors.js';
import { Output } from './output.js';
import { port, positiveNumber } from './parsers.js';
import { toHttpAnswer, toHttpApiEvent, type HttpAnswer } from './serve-event.js';
import { summaries } from './summaries.js';

interface ServeOptions {
  port: number;
  host: string;
  handler: string;
  timeout: number;
}

type LambdaFunction = (event: unknown, context: unknown, callback?: (error: unknown, result?: unknown) => void) => unknown;

/** Lambda's longest timeout, in seconds (and past 2^31 ms setTimeout would fire at once: every request a 504). */
const MAX_TIMEOUT_S = 900;

function lambdaTimeout(value: string): number {
  const seconds = positiveNumber(value);
  if (seconds > MAX_TIMEOUT_S) throw new InvalidArgumentError(`Lambda's timeout is ${MAX_TIMEOUT_S} s at most.`);
  return seconds;
}

/** API Gateway's payload limit: a bigger request never reaches the function. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

const gatewayError = (status: number, message: string): HttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ message })),
});

/** What Node 20 says when it cannot load a module, turned into what to do about it. */
function loadFailure(path: string, cause: unknown): Error {
  const error = cause as NodeJS.ErrnoException;
  if (error.code === 'ERR_UNKNOWN_FILE_EXTENSION' && extname(path) === '.ts') {
    return usageError(
      `Node cannot import ${path} (TypeScript) by itself: compile it and serve the .js, or load it through a ` +
        `loader: NODE_OPTIONS='--import tsx' chat-webhooks serve ${path} (npm install -D tsx).`,
    );
  }
  if (error instanceof SyntaxError && /import statement outside a module|Unexpected token 'export'/.test(error.message)) {
    return usageError(
      `${path} uses import/export but Node loads it as CommonJS: name it .mjs, or add "type": "module" to ` +
        `the package.json next to it.`,
    );
  }
  if (error instanceof ReferenceError && /(require|module|exports) is not defined in ES module scope/.test(error.message)) {
    return usageError(`${path} is CommonJS (require, module.exports) but Node loads it as an ES module ("type": "module"): name it .cjs.`);
  }
  return failure(`Cannot load ${path}: ${error.message}`);
}

async function loadHandler(path: string, name: string): Promise<LambdaFunction> {
  const file = resolve(path);
  if (!existsSync(file)) throw usageError(`No such file: ${path}.`);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (cause) {
    throw loadFailure(path, cause);
  }
  const handler = module[name] ?? (module.default as Record<string, unknown> | undefined)?.[name];
  if (typeof handler === 'function') return handler as LambdaFunction;
  const functions = Object.keys(module).filter((key) => typeof module[key] === 'function');
  const hint = functions.length > 0 ? ` It exports ${functions.map((key) => `"${key}"`).join(', ')}: name one with --handler.` : '';
  throw usageError(`${path} exports no function "${name}" (as in \`export const ${name} = lambdaHandler(webhooks)\`).${hint}`);
}

/** One invocation, as Lambda makes it: async handlers and callback-style ones, bounded by the timeout. */
function invoke(handler: LambdaFunction, event: unknown, timeoutMs: number): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  const context = {
    functionName: 'local',
    functionVersion: '$LATEST',
    awsRequestId: (event as { requestContext: { requestId: string } }).requestContext.requestId,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { timedOut: true })), timeoutMs);
  });
  const result = new Promise<unknown>((resolvePromise, reject) => {
    const callback = (error: unknown, value?: unknown) => (error ? reject(error) : resolvePromise(value));
    Promise.resolve(handler(event, context, callback)).then((value) => {
      // A callback-style handler returns undefined and answers through the callback.
      if (value !== undefined || handler.length < 3) resolvePromise(value);
    }, reject);
  });
  return Promise.race([result, timedOut]).finally(() => clearTimeout(timer));
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolveBody(size > MAX_REQUEST_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function answer(req: IncomingMessage, handler: LambdaFunction, options: ServeOptions, output: Output): Promise<HttpAnswer> {
  const body = await readBody(req);
  if (body === undefined) return gatewayError(413, 'Request Entity Too Large');
  const event = toHttpApiEvent({
    method: req.method as string,
    url: req.url as string,
    rawHeaders: req.rawHeaders,
    body,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    protocol: `HTTP/${req.httpVersion}`,
  });
  try {
    return toHttpAnswer(await invoke(handler, event, options.timeout * 1000));
  } catch (cause) {
    const error = cause as Error & { timedOut?: boolean };
    output.note(output.errColor.red(`The handler ${error.timedOut ? 'timed out' : 'failed'}: ${safe(error.stack ?? String(cause))}`));
    return error.timedOut ? gatewayError(504, 'Endpoint request timed out') : gatewayError(502, 'Internal Server Error');
  }
}

/** Sends the answer; returns the status sent. One Node cannot send (CR LF in a header, a status past 999) is a 502. */
function respond(res: ServerResponse, reply: HttpAnswer, output: Output): number {
  if (res.destroyed) return reply.status;
  let sent = reply;
  try {
    res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
  } catch (cause) {
    // API Gateway refuses a malformed result the same way; thrown here it would end the whole server.
    output.note(output.errColor.red(`The handler's result cannot be sent as HTTP: ${safe(String(cause))}`));
    sent = gatewayError(502, 'Internal Server Error');
    res.writeHead(sent.status, { ...sent.headers, 'content-length': String(sent.body.length) });
  }
  res.end(sent.body);
  return sent.status;
}

function listenOn(server: ReturnType<typeof createServer>, options: ServeOptions): Promise<AddressInfo> {
  return new Promise((resolveAddress, reject) => {
    server.once('error', (cause: NodeJS.ErrnoException) => {
      if (cause.code === 'EADDRINUSE') reject(failure(`Port ${options.port} is already in use; pick another with --port.`));
      else reject(failure(`Cannot listen on ${options.host}:${options.port}: ${cause.message}`));
    });
    server.listen(options.port, options.host, () => resolveAddress(server.address() as AddressInfo));
  });
}

export async function serve(path: string, options: ServeOptions): Promise<number> {
  const handler = await loadHandler(path, options.handler);
  const output = new Output();
  const server = createServer((req, res) => {
    const started = performance.now();
    // A request that fails before the handler (its client hung up mid-body) must not end the server.
    const answered = answer(req, handler, options, output).catch((cause: unknown) => {
      output.note(output.errColor.red(`The request failed: ${safe(String(cause))}`));
      return gatewayError(400, 'Bad Request');
    });
    void answered.then((reply) => {
      const sent = respond(res, reply, output);
      const status = sent < 300 ? output.color.green(String(sent)) : output.color.red(String(sent));
      output.line(`${safe(req.method ?? '')} ${safe(req.url ?? '')} ${status} ${Math.round(performance.now() - started)} ms`);
    });
  });
  const address = await listenOn(server, options);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  output.note(
    `Serving "${options.handler}" of ${path} on http://${host}:${address.port}/ (each request as an API Gateway HTTP API event, ` +
      `payload 2.0). Ctrl-C to stop.`,
  );
  await new Promise((resolveSignal) => {
    process.once('SIGINT', resolveSignal);
    process.once('SIGTERM', resolveSignal);
  });
  server.close();
  server.closeAllConnections();
  // The handler's module may hold the process open (a client, a worker): Lambda would freeze it; stop it.
  setTimeout(() => process.exit(EXIT_OK), 500).unref();
  return EXIT_OK;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description(summaries.serve.description)
    .argument('<module>', 'the handler module, like ./handler.mjs (an ES module)')
    .option('--handler <export>', 'the exported function to invoke', 'handler')
    .option('--port <port>', 'port to listen on (0 picks a free one)', port, 3000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--timeout <seconds>', "the function's timeout: a longer invocation is answered 504 (900 at most)", lambdaTimeout, 30)
    .addHelpText(
      'after',
      `
The module is imported as Node imports it: an ES module (.mjs, or .js under "type": "module" in its
package.json). Node 20 does not run TypeScript: compile it, or serve it through a loader such as tsx:
  $ NODE_OPTIONS='--import tsx' chat-webhooks serve ./handler.ts

Examples:
  $ chat-webhooks serve ./handler.mjs --port 3001
  $ chat-webhooks send message_sent --url http://localhost:3001/webhooks --user app --password s3cret
  $ chat-webhooks listen --user app --password s3cret --forward http://localhost:3001/webhooks`,
    )
    .action(async (path: string, options: ServeOptions) => {
      process.exitCode = await serve(path, options);
    });
}
