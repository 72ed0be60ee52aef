/**
 * Keys that cannot meet (issue 33, item 1): the parts of a key (app, webhook, trigger, then the documented
 * fields, an override's string or the body's digest) are escaped and always in their places, so two events
 * whose parts differ never get one key, on the memory window or in any store. "Differ" as the receiver reads
 * them: `7` and `"7"` are one app, an empty or non-string webhook id is none, `1440` and `"1440"` one id.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotencyKey, type ParsedWebhook } from '../../src/index.js';
import { appIdOf, idempotencyFields, keyPart } from '../../src/events/index.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { keyFunctions, type IdempotencyKeys, type KeyFunctions } from '../../src/receive/idempotency.js';

type Tuple = { appId: unknown; webhook: unknown; trigger: string; values: unknown[]; own: unknown; text: string };

const event = (appId: unknown, webhook: unknown, trigger: string, data: unknown) => ({ appId, webhook, trigger, data }) as ParsedWebhook;
const message = (appId: unknown, webhook: unknown, id: unknown) => event(appId, webhook, 'message_sent', { message: { id } });
const call = (appId: unknown, webhook: unknown, id: unknown, sentAt: unknown) => event(appId, webhook, 'call_initiated', { call: { id, sentAt } });

/** What stores keep: PostgreSQL, SQLite, Redis and DynamoDB all write UTF-8, where a lone surrogate is U+FFFD. */
const stored = (key: string) => Buffer.from(key, 'utf8').toString('latin1');

describe('keys of the issue\'s colliding events are distinct', () => {
  it('a colon inside a part: appId `a:b` + webhook `c` against appId `a` + webhook `b:c`', () => {
    expect(idempotencyKey(message('a:b', 'c', 1))).not.toBe(idempotencyKey(message('a', 'b:c', 1)));
    expect(idempotencyKey(message('a:b', 'c', 1))).toBe('a%3Ab:c:message_sent:1');
  });

  it('the short form and the long: no appId from webhook `acme:wh` against app `acme`\'s webhook `wh`', () => {
    expect(idempotencyKey(message(undefined, 'acme:wh', 1))).not.toBe(idempotencyKey(message('acme', 'wh', 1)));
    expect(idempotencyKey(message(undefined, 'acme:wh', 1))).toBe(':acme%3Awh:message_sent:1');
  });

  it('field counts differing per trigger: a no-appId call_initiated against an app\'s message_sent of the same words', () => {
    const noApp = idempotencyKey(call(undefined, 'X', 'message_sent', 'Z'));
    const withApp = idempotencyKey(message('X', 'call_initiated', 'Z'));
    expect(noApp).toBe(':X:call_initiated:message_sent:Z');
    expect(withApp).toBe('X:call_initiated:message_sent:Z');
    expect(noApp).not.toBe(withApp);
  });

  it('a message id spelled like the body digest is not the digest of a message without an id', () => {
    const body = JSON.stringify({ trigger: 'message_sent', appId: 'a', webhook: 'w', data: { message: {} } });
    const digestKey = idempotencyKey(message('a', 'w', undefined), body);
    const spelled = digestKey.slice('a:w:message_sent:'.length);
    expect(spelled.startsWith('#')).toBe(true);
    expect(idempotencyKey(message('a', 'w', spelled))).not.toBe(digestKey);
  });

  it('an override\'s string is one part: `b:c` is not the fields `b` and `c`, and `#…` is not the body', () => {
    const { keyOf } = keyFunctions({ call_initiated: (e) => String(e.data.call.id), message_sent: () => '#digest' });
    expect(keyOf(call('a', 'w', 'b:c', 1))).toBe('a:w:call_initiated:b%3Ac');
    expect(keyOf(call('a', 'w', 'b:c', 1))).not.toBe(idempotencyKey(call('a', 'w', 'b', 'c')));
    expect(keyOf(message('a', 'w', 1))).toBe('a:w:message_sent:%23digest');
  });

  it('unknown triggers with a colon in the name keep their own place', () => {
    expect(idempotencyKey(event('a', 'w', 'x:y', {}), '{}')).not.toBe(idempotencyKey(event('a:w', 'x', 'y', {}), '{}'));
  });

  it('ids differing only in a lone surrogate stay distinct where stores write UTF-8; NUL never reaches a store', () => {
    const keys = ['\uD800', '\uD801', '\uDC00', '\uFFFD', '%uD800'].map((id) => idempotencyKey(message('a', 'w', id)));
    expect(new Set(keys.map(stored)).size).toBe(keys.length);
    expect(keys[0]).toBe('a:w:message_sent:%uD800');
    expect(idempotencyKey(message('a', 'w', 'x\0y'))).toBe('a:w:message_sent:x%00y');
  });
});

describe('keyPart', () => {
  it('leaves plain ids alone, so keys with an appId and plain parts are what they were', () => {
    for (const id of ['1421', 'wh_chat_events', 'v1.us.2601c4f1a2b3c4d5.1763699990a7f3', 'héllo ✓', '😀', 'a/b+c=d', '']) expect(keyPart(id)).toBe(id);
    expect(idempotencyKey(message('2601c4f1a2b3c4d5', 'wh_chat_events', '1421'))).toBe('2601c4f1a2b3c4d5:wh_chat_events:message_sent:1421');
  });

  it('escapes the separator, the escape, `#`, NUL and lone surrogates, leaving paired surrogates whole', () => {
    expect(keyPart('%:#\0')).toBe('%25%3A%23%00');
    expect(keyPart('%3A')).toBe('%253A');
    expect(keyPart('a\uDBFF\uDFFFb\uDBFF')).toBe('a\uDBFF\uDFFFb%uDBFF');
    expect(keyPart('\uDC00\uD800')).toBe('%uDC00%uD800');
    expect(keyPart('😀:')).toBe('😀%3A');
  });

  it('escapes a short part (scanned a character at a time) as a long one (tested by a regexp)', () => {
    // Past 32 characters a part takes the regexp; plain padding changes nothing of the escaping before it.
    const pad = 'a'.repeat(40);
    for (let code = 0; code <= 0xffff; code++) {
      const part = `x${String.fromCharCode(code)}`;
      expect(keyPart(part + pad)).toBe(keyPart(part) + pad);
    }
    for (const part of ['\uD83D\uDE00', '\uDE00\uD83D', '%:', 'a'.repeat(32), `${'a'.repeat(31)}:`, `${'a'.repeat(32)}:`]) {
      expect(keyPart(part + pad)).toBe(keyPart(part) + pad);
    }
  });
});

// Few letters, so tuples often spell each other's parts: separators, escapes, digest marks, trigger names.
const TOKENS = ['', 'a', 'X', ':', '%', '%3A', '%25', '3A', '#', '#x', '\0', '\uD800', '\uDC00', '\uFFFD', 'message_sent', 'call_initiated'];
const text = fc.array(fc.constantFrom(...TOKENS), { maxLength: 4 }).map((tokens) => tokens.join(''));
const value = fc.oneof(text, fc.integer({ min: 0, max: 20 }), fc.constant(undefined));
const TRIGGERS = [...Object.keys(idempotencyFields), 'group_created', 'x:y', 'x', ':'];
const tuple: fc.Arbitrary<Tuple> = fc.record({
  appId: fc.oneof(text, fc.integer({ min: 0, max: 9 }), fc.constant(undefined), fc.constant(null)),
  webhook: fc.oneof(text, fc.constant(undefined), fc.constant(42)),
  trigger: fc.oneof(fc.constantFrom(...TRIGGERS), text),
  values: fc.array(value, { minLength: 2, maxLength: 2 }),
  own: fc.oneof(text, fc.constant(undefined), fc.constant(7)),
  text: fc.constantFrom('hello', 'again'),
});

/** The event of a tuple: the trigger's documented paths set to its values; `own` is what an override reads. */
function eventOf({ appId, webhook, trigger, values, own, text }: Tuple): { event: ParsedWebhook; rawBody: string } {
  const data: Record<string, unknown> = { own, text };
  const paths = Object.hasOwn(idempotencyFields, trigger) ? (idempotencyFields[trigger] as readonly (readonly string[])[]) : [];
  paths.forEach((path, i) => {
    let holder = data;
    for (const step of path.slice(0, -1)) holder = (holder[step] ??= {}) as Record<string, unknown>;
    holder[path[path.length - 1] as string] = values[i];
  });
  const body = { appId, webhook, trigger, data };
  return { event: body as ParsedWebhook, rawBody: JSON.stringify(body) };
}

const idText = (v: unknown) => (typeof v === 'string' && v !== '' ? v : Number.isFinite(v) ? String(v) : undefined);

/**
 * What names the event as the receiver reads it, written without any of the key's encoding: the app, the
 * webhook, the trigger, then the field values, the override's string, or (neither) the exact body's digest.
 */
function identityOf(t: Tuple, rawBody: string, overridden: ReadonlySet<string>): unknown[] {
  const app = appIdOf({ appId: t.appId }) ?? '';
  const webhook = typeof t.webhook === 'string' ? t.webhook : '';
  let rest: unknown[] | undefined;
  if (overridden.has(t.trigger)) rest = typeof t.own === 'string' && t.own !== '' ? [t.own] : undefined;
  else if (Object.hasOwn(idempotencyFields, t.trigger)) {
    const fields = (idempotencyFields[t.trigger] as unknown[]).map((_, i) => idText(t.values[i]));
    rest = fields.every((f) => f !== undefined) ? fields : undefined;
  }
  return [app, webhook, t.trigger, ...(rest ?? [{ body: sha256Base64(rawBody) }])];
}

/** One place of a key read back; throws on anything the encoding never writes (a stray `%` or `#`). */
function unescape(place: string): string {
  return place.replace(/%(?:25|3A|23|00|u([0-9A-F]{4}))|%|#/g, (escape, unit: string | undefined) => {
    if (unit !== undefined) return String.fromCharCode(parseInt(unit, 16));
    const plain = { '%25': '%', '%3A': ':', '%23': '#', '%00': '\0' }[escape];
    if (plain === undefined) throw new Error(`"${escape}" is no escape`);
    return plain;
  });
}

/**
 * A key read back into its parts, by the grammar alone: three places, then a digest (`#…`) or the field
 * places. That every key reads back to the parts it was made of is what makes the encoding injective.
 */
function decode(key: string): unknown[] {
  const places = key.split(':');
  if (places.length < 4) throw new Error(`"${key}" has fewer than four places`);
  const [app, webhook, trigger, ...rest] = places as [string, string, string, ...string[]];
  const tail = rest[0]?.startsWith('#') && rest.length === 1 ? [{ body: rest[0].slice(1) }] : rest.map(unescape);
  return [unescape(app), unescape(webhook), unescape(trigger), ...tail];
}

/**
 * Each key reads back to its event's parts after the round trip through UTF-8 that stores make (so a lone
 * surrogate must not be in it); and among many events, keys meet exactly when their parts do.
 */
function injective(keys: KeyFunctions, overridden: ReadonlySet<string>) {
  return fc.property(fc.array(tuple, { minLength: 1, maxLength: 40 }), (tuples) => {
    const identityOfKey = new Map<string, string>();
    for (const t of tuples) {
      const { event, rawBody } = eventOf(t);
      const key = keys.keyOf(event, rawBody);
      const identity = identityOf(t, rawBody, overridden);
      expect(key.includes('\0')).toBe(false);
      expect(decode(Buffer.from(key, 'utf8').toString('utf8'))).toEqual(identity);
      const other = identityOfKey.get(stored(key));
      if (other !== undefined) expect(JSON.stringify(identity)).toBe(other);
      identityOfKey.set(stored(key), JSON.stringify(identity));
    }
  });
}

describe('distinct part tuples never give one key (property)', () => {
  it('the documented fields, else the body digest: every trigger, with and without appId and webhook', () => {
    fc.assert(injective(keyFunctions(undefined), new Set()), { numRuns: 1000 });
  });

  it('overrides from `idempotencyKeys`, for known triggers and unknown ones with a colon in the name', () => {
    const own = (e: { data: unknown }) => (e.data as { own: string }).own;
    const overrides: IdempotencyKeys = { message_sent: own, call_started: own, 'x:y': own, ':': own };
    fc.assert(injective(keyFunctions(overrides), new Set(Object.keys(overrides))), { numRuns: 1000 });
  });

  it('idempotencyKey is the receiver\'s default key', () => {
    fc.assert(
      fc.property(tuple, (t) => {
        const { event, rawBody } = eventOf(t);
        expect(idempotencyKey(event, rawBody)).toBe(keyFunctions(undefined).keyOf(event, rawBody));
      }),
    );
  });
});
