import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bodyDigest, DedupeWindow } from '../../src/receive/intake/dedupe.js';
import { createWebhooks } from '../../src/index.js';
import { buildRequest } from '../../src/testing/index.js';
import { fixture } from './support.js';

describe('DedupeWindow', () => {
  it('refuses a key seen within the window and takes it again after', () => {
    const window = new DedupeWindow({ windowMs: 100 });
    expect(window.add('a', 0)).toBe(true);
    expect(window.add('a', 99)).toBe(false);
    expect(window.add('a', 100)).toBe(true);
  });

  it('forgets the oldest keys first beyond maxKeys', () => {
    const window = new DedupeWindow({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c', 'd']) expect(window.add(key, 1)).toBe(true);
    expect(window.add('a', 1)).toBe(true); // forgotten to make room for d
    expect(window.add('c', 1)).toBe(false);
    expect(window.add('d', 1)).toBe(false);
  });

  it('takes a deleted key again, and its old slot does not forget the new entry early', () => {
    const window = new DedupeWindow({ maxKeys: 3, windowMs: 1000 });
    window.add('a', 1);
    window.delete('a');
    expect(window.add('a', 2)).toBe(true);
    window.add('b', 3); // ring: a(1), a(2), b(3) — full
    window.add('c', 4); // evicts the stale slot a(1), which must not forget a(2)
    expect(window.add('a', 5)).toBe(false);
  });
});

/** The window's behaviour, written the plainest way: a list of [key, time] pairs, oldest first. */
class ReferenceWindow {
  entries: { key: string; time: number; live: boolean }[] = [];
  constructor(
    readonly windowMs: number,
    readonly maxKeys: number,
  ) {}
  add(key: string, now: number): boolean {
    while (this.entries.length > 0 && now - (this.entries[0] as { time: number }).time >= this.windowMs) this.entries.shift();
    if (this.entries.some((entry) => entry.live && entry.key === key)) return false;
    if (this.entries.length === this.maxKeys) this.entries.shift();
    this.entries.push({ key, time: now, live: true });
    return true;
  }
  delete(key: string): void {
    for (const entry of this.entries) if (entry.key === key) entry.live = false;
  }
}

describe('DedupeWindow against a plain reference', () => {
  it('answers every sequence of adds and deletes as the reference does', () => {
    // Few distinct keys, a small window and capacity: repeats, evictions, expiries, deletes and index
    // probe runs that wrap around all happen often. The salt gives every run other index positions.
    const operation = fc.record({
      kind: fc.constantFrom('add', 'add', 'add', 'delete'),
      key: fc.integer({ min: 0, max: 15 }),
      advance: fc.integer({ min: 0, max: 30 }),
    });
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(operation, { maxLength: 300 }),
        (salt, maxKeys, windowMs, operations) => {
          const window = new DedupeWindow({ maxKeys, windowMs });
          const reference = new ReferenceWindow(windowMs, maxKeys);
          let now = 0;
          for (const { kind, key: n, advance } of operations) {
            const key = `${salt}${n}`;
            now += advance;
            if (kind === 'delete') {
              window.delete(key);
              reference.delete(key);
            } else {
              expect(window.add(key, now)).toBe(reference.add(key, now));
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds every remembered key after evictions, wherever the index placed it', () => {
    // Small capacities make small indexes, where probe runs often cross the end of the table: evicting the
    // oldest key must shift the rest of its run back without cutting any entry off.
    let lost = 0;
    for (let maxKeys = 1; maxKeys <= 8; maxKeys++) {
      for (let trial = 0; trial < 300; trial++) {
        const window = new DedupeWindow({ maxKeys });
        const keys = Array.from({ length: maxKeys + 3 }, (_, i) => `${maxKeys}/${trial}/${i}`);
        for (const key of keys) window.add(key, 0);
        for (const key of keys.slice(-maxKeys)) if (window.add(key, 0)) lost++;
      }
    }
    expect(lost).toBe(0);
  });

  it('deleting a key it does not hold changes nothing, wherever the index placed the others', () => {
    let lost = 0;
    for (let maxKeys = 1; maxKeys <= 8; maxKeys++) {
      for (let trial = 0; trial < 300; trial++) {
        const window = new DedupeWindow({ maxKeys });
        const keys = Array.from({ length: maxKeys }, (_, i) => `${maxKeys}/${trial}/${i}`);
        for (const key of keys) window.add(key, 0);
        window.delete('never added');
        for (const key of keys) if (window.add(key, 0)) lost++;
      }
    }
    expect(lost).toBe(0);
  });

  it('tells apart bodies that differ in one byte anywhere, read from any offset', () => {
    const text = '{"trigger":"message_sent","data":{"id":"12345"}}xyz'; // not a multiple of 4 bytes long
    for (const offset of [0, 1, 2, 3]) {
      const backing = Buffer.alloc(text.length + 4);
      backing.write(text, offset);
      const body = backing.subarray(offset, offset + text.length);
      const window = new DedupeWindow();
      expect(window.add(body, 0)).toBe(true);
      expect(window.add(Buffer.from(text), 0)).toBe(false); // same bytes, other buffer: a repeat
      for (let i = 0; i < body.length; i++) {
        const changed = Buffer.from(body);
        changed[i] = (changed[i] as number) ^ 1;
        expect(window.add(changed, 0), `byte ${i} changed`).toBe(true);
        // The same content as text is the same delivery.
        expect(window.add(changed.toString('latin1'), 0), `character ${i} changed`).toBe(false);
      }
    }
  });

  it('recognises text with characters beyond ASCII as its UTF-8 bytes', () => {
    for (const text of ['€{"text":"plain"}', '{"text":"caf\u00e9"}', '{"text":"abcdefgh"}\u{1F600}', '{"a":1}\u00e9']) {
      const window = new DedupeWindow();
      expect(window.add(text, 0)).toBe(true);
      expect(window.add(Buffer.from(text), 0), text).toBe(false);
      // The same text without its last character is another delivery, in either form.
      const shorter = text.slice(0, -1);
      expect(window.add(shorter, 0), shorter).toBe(true);
      expect(window.add(Buffer.from(shorter), 0), shorter).toBe(false);
    }
    const window = new DedupeWindow();
    expect(window.add(Buffer.from('{"text":"naïve"}'), 0)).toBe(true);
    expect(window.add('{"text":"naïve"}', 0)).toBe(false);
    expect(window.add('{"text":"naive"}', 0)).toBe(true);
  });

  it('takes text and its UTF-8 bytes for the same delivery, whatever the length and wherever a character beyond ASCII is', () => {
    for (const length of [1, 3, 4, 5, 511, 512, 513, 2000]) {
      for (const odd of [undefined, 0, Math.floor(length / 2), length - 1]) {
        const chars = Array.from({ length }, (_, i) => String.fromCharCode(32 + ((i * 7) % 95)));
        if (odd !== undefined) chars[odd] = '\u00e9';
        const text = chars.join('');
        const window = new DedupeWindow();
        expect(window.add(Buffer.from(text), 0), `${length}/${odd}`).toBe(true);
        expect(window.add(text, 0), `${length}/${odd} as text`).toBe(false);
        expect(window.add(`${text}!`, 0), `${length}/${odd} longer`).toBe(true);
        expect(window.add(Buffer.from(`${text}!`), 0), `${length}/${odd} longer, as bytes`).toBe(false);
      }
    }
  });

  it('tells apart long texts that differ only in their last character, whatever their length', () => {
    // Text up to 16 384 characters is encoded into a reused buffer of three bytes a character, longer text on
    // its own: a text cut to the buffer would be taken for any other with the same beginning.
    for (const length of [5_000, 16_383, 16_384, 16_385, 60_000]) {
      for (const filler of ['a', '\u20ac']) {
        const window = new DedupeWindow();
        const text = filler.repeat(length - 1);
        expect(window.add(`${text}x`, 0), `${length} ${filler}`).toBe(true);
        expect(window.add(`${text}y`, 0), `${length} ${filler}`).toBe(true);
        expect(window.add(Buffer.from(`${text}x`), 0), `${length} ${filler} as bytes`).toBe(false);
      }
    }
  });

  it('keeps telling 100 000 distinct digests apart at its default capacity', () => {
    const window = new DedupeWindow();
    let refused = 0;
    for (let i = 0; i < 100_000; i++) if (!window.add(bodyDigest(`body ${i}`), i)) refused++;
    expect(refused).toBe(0);
    // The last 10 000 are remembered, the ones before are forgotten.
    expect(window.add(bodyDigest('body 99999'), 100_000)).toBe(false);
    expect(window.add(bodyDigest('body 90000'), 100_000)).toBe(false);
    expect(window.add(bodyDigest('body 89999'), 100_000)).toBe(true);
  });
});

describe('the dedupe option', () => {
  it('refuses capacities and windows that cannot work, naming the option', () => {
    for (const dedupe of [{ maxKeys: 0 }, { maxKeys: 1.5 }, { maxKeys: 2 ** 30 }, { windowMs: 0 }, { windowMs: Number.NaN }]) {
      expect(() => createWebhooks({ auth: false, dedupe })).toThrowError(
        expect.objectContaining({
          name: 'ConfigurationError',
          option: expect.stringMatching(/^dedupe\.(maxKeys|windowMs)$/),
          message: expect.stringMatching(/dedupe\.(maxKeys|windowMs)/),
        }),
      );
    }
    expect(() => createWebhooks({ auth: false, dedupe: { maxKeys: 1, windowMs: 1 } })).not.toThrow();
  });
});

describe('what the window recognises a repeat by (no inbox)', () => {
  const auth = { username: 'platform', password: 's3cret' };
  const message = (id: string, text: string) => {
    const event = JSON.parse(fixture('message_sent'));
    event.data.message.id = id;
    event.data.message.data.text = text;
    return JSON.stringify({ ...event, webhook: 'wh-1' });
  };
  const poll = (spacing: string) => `{${spacing}"trigger":"poll_voted","webhook":"wh-1","data":{}}`;

  function receiverCounting(options: Parameters<typeof createWebhooks>[0] = { auth }) {
    const webhooks = createWebhooks({ logger: {}, invalidPayload: 'accept', ...options });
    const handled: string[] = [];
    const duplicates: string[] = [];
    webhooks.onAny((event) => void handled.push(JSON.stringify(event)));
    webhooks.onDuplicate((_event, { key }) => void duplicates.push(key));
    webhooks.onError(() => undefined);
    const send = async (text: string) => {
      const response = await webhooks.handle(buildRequest(text, { auth }));
      await response.done;
      return response.status;
    };
    return { handled, duplicates, send };
  }

  it('its idempotency key where the trigger documents one: the same message in other bytes is a repeat', async () => {
    const { handled, duplicates, send } = receiverCounting();
    expect(await send(message('42', 'hello'))).toBe(200);
    expect(await send(message('42', 'hello').replace('{', '{ '))).toBe(200);
    expect(await send(message('43', 'hello'))).toBe(200);
    expect(handled).toHaveLength(2);
    expect(duplicates).toEqual(['2601c4f1a2b3c4d5:wh-1:message_sent:42']);
  });

  it('the exact body where the trigger has no key: other bytes are another delivery, the same bytes a repeat', async () => {
    const { handled, duplicates, send } = receiverCounting();
    await send(poll(''));
    await send(poll(' '));
    await send(poll(''));
    expect(handled).toHaveLength(2);
    expect(duplicates).toHaveLength(1);
    expect(duplicates[0]).toMatch(/^:wh-1:poll_voted:#/);
  });

  it('the idempotencyKeys override, and the body when the override throws or returns nothing', async () => {
    const { handled, send } = receiverCounting({
      auth,
      idempotencyKeys: {
        message_sent: (event) => {
          const { text } = event.data.message.data as { text?: string };
          return text === 'boom' ? (undefined as unknown as string) : (text as string);
        },
        poll_voted: () => {
          throw new Error('key function broke');
        },
      },
    });
    expect(await send(message('1', 'same text'))).toBe(200);
    expect(await send(message('2', 'same text'))).toBe(200); // same override key: a repeat
    expect(await send(message('3', 'boom'))).toBe(200);
    expect(await send(message('3', 'boom').replace('{', '{ '))).toBe(200); // no key: the bytes differ
    expect(await send(poll(''))).toBe(200);
    expect(await send(poll(''))).toBe(200); // the override threw: the same bytes are a repeat
    expect(handled.map((e) => JSON.parse(e).data.message?.id ?? 'poll')).toEqual(['1', '3', '3', 'poll']);
  });
});
