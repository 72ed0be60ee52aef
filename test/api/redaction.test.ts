/**
 * No credential in an `ApiError`, ever: whatever the server sends (status text, text or JSON body, a request
 * id header, a failure's message and cause chain), with the key anywhere in it, including across the points
 * where the client cuts long texts (2 000 characters for a text body, 200 for the rest).
 *
 * The threshold: no piece of 4 or more consecutive characters of a secret may show in any rendering of the
 * error. The secrets are drawn from letters the rest of the text never uses (`QZXJKVW` and `qzxj`), so any
 * 4-character piece found could only have come from a secret; 1 to 3 characters would match ordinary text by
 * chance and give away at most 3 characters of a 12+ character key.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createChatClient, createManagementClient } from '../../src/api/index.js';

interface Answer {
  status: number;
  statusText: string;
  contentType: string;
  body: string;
  requestId: string;
}

let server: Server;
let baseUrl: string;
let next: Answer;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(next.status, next.statusText, { 'content-type': next.contentType, 'x-request-id': next.requestId });
      res.end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const SECRET_LETTERS = [...'QZXJKVWqzxj'];
const FILLER_LETTERS = [...'abcdefghilmnoprstuy ABCDEFGHILMNOPRSTUY.,:-_0123456789'];
const secretArb = fc.string({ unit: fc.constantFrom(...SECRET_LETTERS), minLength: 12, maxLength: 48 });
const fillerArb = (maxLength: number) => fc.string({ unit: fc.constantFrom(...FILLER_LETTERS), maxLength });

/** Every text form an error can take in a log: its own, wrapped as a cause, and its body. */
function renderings(error: unknown): string[] {
  const e = error as ApiError;
  const wrapped = new Error('handler failed', { cause: new Error('while calling the platform', { cause: e }) });
  return [
    e.message,
    String(e),
    e.stack ?? '',
    JSON.stringify(e),
    JSON.stringify(e.body ?? null),
    String(e.body),
    inspect(e, { depth: 20, showHidden: true }),
    inspect(e.cause, { depth: 20, showHidden: true }),
    inspect(wrapped, { depth: 20, showHidden: true }),
    JSON.stringify({ error: e, cause: wrapped.cause }),
  ];
}

/** The first 4-character piece of a secret found in any rendering, or undefined. */
function leakedPiece(error: unknown, secrets: readonly string[]): string | undefined {
  const texts = renderings(error);
  for (const secret of secrets) {
    for (let i = 0; i + 4 <= secret.length; i++) {
      const piece = secret.slice(i, i + 4);
      if (texts.some((text) => text.includes(piece))) return piece;
    }
  }
  return undefined;
}

type Kind = 'chat' | 'management';
function call(kind: Kind, secrets: string[], fetchImpl?: typeof fetch): Promise<unknown> {
  const common = { baseUrl, retry: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) };
  const promise =
    kind === 'chat'
      ? createChatClient({ apiKey: secrets[0]!, ...common }).users.list()
      : createManagementClient({ key: secrets[0]!, secret: secrets[1]!, ...common }).apps.create({ name: 'n', region: 'us' });
  return promise.then(() => expect.unreachable('should have failed'), (error: unknown) => error);
}

const where = ['text body', 'json message', 'json field', 'broken json', 'status text', 'request id'] as const;
type Where = (typeof where)[number];

/** An answer that carries `text` (holding the secrets) in the given place. */
function answerWith(place: Where, text: string, status: number): Answer {
  const answer: Answer = { status, statusText: 'Nope', contentType: 'text/plain', body: 'plain failure', requestId: 'req-1' };
  if (place === 'text body') answer.body = text;
  if (place === 'json message') Object.assign(answer, { contentType: 'application/json', body: JSON.stringify({ error: { message: text } }) });
  if (place === 'json field') Object.assign(answer, { contentType: 'application/json', body: JSON.stringify({ [text.slice(0, 300)]: [text] }) });
  if (place === 'broken json') Object.assign(answer, { contentType: 'application/json', body: `{"message": "${text}` });
  if (place === 'status text') answer.statusText = text.slice(0, 1_000);
  if (place === 'request id') answer.requestId = text.slice(0, 4_000);
  return answer;
}

/**
 * The filler with each secret inserted at its position in the filler (clamped to its end). Inserting from
 * the last position backwards keeps every secret whole: none lands inside another.
 */
function textWith(filler: string, placed: Array<[string, number]>): string {
  let text = filler;
  const positioned = placed.map(([secret, at]) => [secret, Math.min(at, filler.length)] as const);
  for (const [secret, position] of positioned.sort((a, b) => b[1] - a[1])) text = text.slice(0, position) + secret + text.slice(position);
  return text;
}

describe('no piece of a credential in any error form', () => {
  it('property: secrets anywhere in what the server sends, in every form of the error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Kind>('chat', 'management'),
        secretArb,
        secretArb,
        fc.constantFrom(...where),
        fillerArb(6_000),
        fc.nat(6_000),
        fc.nat(6_000),
        fc.constantFrom(200, 400, 401, 403, 500),
        async (kind, first, second, place, filler, at1, at2, status) => {
          fc.pre(!first.includes(second) && !second.includes(first));
          // A 2xx JSON answer is a success for apps.create: nothing to inspect.
          fc.pre(!(status === 200 && kind === 'management' && place.startsWith('json')));
          const secrets = kind === 'chat' ? [first] : [first, second];
          next = answerWith(place, textWith(filler, secrets.map((secret, n) => [secret, n === 0 ? at1 : at2])), status);
          const error = await call(kind, secrets);
          expect(error).toBeInstanceOf(ApiError);
          expect(leakedPiece(error, secrets)).toBeUndefined();
        },
      ),
      { numRuns: 250 },
    );
  }, 60_000);

  it('a key at every position across each cut (2 000 for a text body, 200 for the others)', async () => {
    const apiKey = 'QZXJKVWqzxjQZXJKVWqzxjQZ'; // 24 characters
    const filler = 'abcdefghil '.repeat(400);
    const cuts: Array<[Where, number]> = [['text body', 2_000], ['json message', 200], ['status text', 200], ['request id', 200]];
    for (const [place, cut] of cuts) {
      for (let at = cut - apiKey.length - 1; at <= cut + 1; at++) {
        next = answerWith(place, textWith(filler, [[apiKey, at]]), 401);
        const error = (await call('chat', [apiKey])) as ApiError;
        expect(leakedPiece(error, [apiKey]), `${place}, key at ${at}`).toBeUndefined();
        if (place === 'text body' && at + '[redacted]'.length <= cut) expect(String(error.body)).toContain('[redacted]');
      }
    }
  }, 60_000);

  it('the status text is redacted: "401 Invalid apiKey <key>" names no key', async () => {
    const apiKey = 'QZXJ-live-KVWqzxj';
    next = { status: 401, statusText: `Invalid apiKey ${apiKey}`, contentType: 'text/plain', body: '', requestId: apiKey };
    const error = (await call('chat', [apiKey])) as ApiError;
    expect(error.message).toContain('401 Invalid apiKey [redacted]');
    expect(error.requestId).toBe('[redacted]');
    for (const text of renderings(error)) expect(text).not.toContain(apiKey);
  });

  it('a key echoed URL-encoded or JSON-escaped in a text body', async () => {
    const apiKey = 'QZ/XJ+KV"W=qz\\xj';
    const body = `see https://x.example/?k=${encodeURIComponent(apiKey)} or {"k": ${JSON.stringify(apiKey)} and`;
    next = { status: 400, statusText: 'Bad', contentType: 'text/html', body, requestId: 'r' };
    const error = (await call('chat', [apiKey])) as ApiError;
    expect(error.body).toBe('see https://x.example/?k=[redacted] or {"k": "[redacted]" and');
    for (const text of renderings(error)) for (const form of [apiKey, encodeURIComponent(apiKey)]) expect(text).not.toContain(form);
  });

  it('a management secret that contains the key is redacted whole, not around the key', async () => {
    const key = 'QZXJKVW';
    const secret = `qzxj${key}qzxjQZXJ`;
    next = { status: 401, statusText: 'No', contentType: 'text/plain', body: `bad secret ${secret} / key ${key}`, requestId: 'r' };
    const error = (await call('management', [key, secret])) as ApiError;
    expect(error.body).toBe('bad secret [redacted] / key [redacted]');
  });

  it('property: a failing fetch whose message and cause chain carry the secrets', async () => {
    await fc.assert(
      fc.asyncProperty(secretArb, fillerArb(3_000), fc.nat(3_000), async (apiKey, filler, at) => {
        const text = textWith(filler, [[apiKey, at]]);
        const failing: typeof fetch = async () => {
          const root = Object.assign(new Error(`socket said ${text}`), { code: 'ECONNRESET', header: apiKey });
          throw new TypeError(`fetch failed: ${text}`, { cause: root });
        };
        const error = await call('chat', [apiKey], failing);
        expect(error).toMatchObject({ code: 'network' });
        expect(leakedPiece(error, [apiKey])).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });
});
