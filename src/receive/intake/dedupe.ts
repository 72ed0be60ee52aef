/**
 * Remembers recent deliveries: the service can deliver the same event more than once.
 */
import { randomInt32, sha1Base64, utf8Bytes } from '#platform';

export interface DedupeOptions {
  /**
   * How long a delivery is remembered, in milliseconds.
   * @defaultValue 600000 (10 minutes)
   */
  windowMs?: number;
  /**
   * How many deliveries are remembered at most; the oldest are forgotten first. The window takes about
   * 50 bytes per key, allocated up front. At most 2^24.
   * @defaultValue 10000
   */
  maxKeys?: number;
}

/** Text up to this many characters is encoded into a reused buffer (3 bytes a character at most). */
const SCRATCH_CHARS = 16 * 1024;
const encoder = new TextEncoder();

/** Beyond this the up-front allocation (about 900 MB) is surely a mistake. */
export const MAX_DEDUPE_KEYS = 2 ** 24;

/**
 * A digest of a delivery's exact body, for an inbox's idempotency key. The platform sends no delivery id,
 * and a key built from chosen fields could merge two different events; identical bytes are the same delivery.
 */
export function bodyDigest(rawBody: string | Uint8Array): string {
  return sha1Base64(rawBody);
}

/**
 * The window remembers a 96-bit fingerprint of each delivery's exact content rather than the content or a
 * string key: two multiplicative (FNV-style) lanes over its 32-bit words (text as UTF-8), each seeded at
 * random per window and finished with murmur3's mixer, plus its length. The lanes are computed in JS: in a
 * server, SHA-1 through node:crypto cost several microseconds a request (the micro benchmark's 0.8 µs hides
 * OpenSSL's per-call set-up running cold between requests), the lanes a fraction of that, and the window
 * needs no cryptographic strength: two different deliveries of the same length share both lanes by a chance
 * near 2^-64, and the seeds are unknown outside the process.
 *
 * Everything lives in typed arrays: remembered strings would each outlive the young generation and be
 * copied on their way to the old one. Layout: a ring of slots, oldest first (fingerprint, time first
 * seen, whether still live), and an open-addressing index (linear probing) from fingerprint to slot.
 * Forgetting the oldest slot removes its index entry by backward shifting, so the index never fills with
 * tombstones. Each index place holds lane A beside its slot number: probing and shifting read only the
 * index, whose places are random, and touch a slot only for a likely match. Between two requests a server
 * evicts these tables from the CPU caches, so every random place read costs a trip to memory.
 */
export class DedupeWindow {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  /** Per slot: the fingerprint's two lanes and the content's length. */
  readonly #laneA: Int32Array;
  readonly #laneB: Int32Array;
  readonly #length: Int32Array;
  readonly #times: Float64Array;
  /** 0 for a slot whose key was deleted: its turn in the ring comes, but it is no longer in the index. */
  readonly #live: Uint8Array;
  /** Two numbers per place: slot number + 1 (0 for an empty place), then that slot's lane A. */
  readonly #index: Int32Array;
  readonly #mask: number;
  #oldest = 0;
  #count = 0;
  /** The fingerprint of the last content given to #fingerprint. */
  #fpA = 0;
  #fpB = 0;
  #fpLength = 0;
  readonly #seedA = randomInt32();
  readonly #seedB = randomInt32();
  /** Where text is encoded to UTF-8 for fingerprinting, and a view to read its words; made on first use. */
  #scratch: Uint8Array | undefined;
  #scratchView: DataView | undefined;

  constructor({ windowMs = 10 * 60_000, maxKeys = 10_000 }: DedupeOptions = {}) {
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
    this.#laneA = new Int32Array(maxKeys);
    this.#laneB = new Int32Array(maxKeys);
    this.#length = new Int32Array(maxKeys);
    this.#times = new Float64Array(maxKeys);
    this.#live = new Uint8Array(maxKeys);
    // At most half full, so that probe runs stay short.
    let size = 2;
    while (size < maxKeys * 2) size *= 2;
    this.#index = new Int32Array(size * 2);
    this.#mask = size - 1;
  }

  /** Records a delivery by its exact content; returns false when it was already seen within the window. */
  add(content: string | Uint8Array, now = Date.now()): boolean {
    this.#forgetExpired(now);
    this.#fingerprint(content);
    if (this.#find() !== -1) return false;
    if (this.#count === this.#maxKeys) this.#forgetOldest();
    const slot = (this.#oldest + this.#count) % this.#maxKeys;
    this.#laneA[slot] = this.#fpA;
    this.#laneB[slot] = this.#fpB;
    this.#length[slot] = this.#fpLength;
    this.#times[slot] = now;
    this.#live[slot] = 1;
    this.#count++;
    let place = this.#fpA & this.#mask;
    while (this.#index[place * 2] !== 0) place = (place + 1) & this.#mask;
    this.#index[place * 2] = slot + 1;
    this.#index[place * 2 + 1] = this.#fpA;
    return true;
  }

  /** Whether this content was recorded within the window, without recording it. */
  has(content: string | Uint8Array, now = Date.now()): boolean {
    this.#forgetExpired(now);
    this.#fingerprint(content);
    return this.#find() !== -1;
  }

  /** Forgets a delivery, so that a retry of one that was not acknowledged is taken again. */
  delete(content: string | Uint8Array): void {
    this.#fingerprint(content);
    const place = this.#find();
    if (place === -1) return;
    // Its slot in the ring stays until its turn comes, as a dead one.
    this.#live[(this.#index[place * 2] as number) - 1] = 0;
    this.#unindex(place);
  }

  #fingerprint(content: string | Uint8Array): void {
    // Text counts as its UTF-8 bytes, so a delivery is recognised whichever form an adapter handed over. An
    // idempotency key is encoded too, short as it is: keys are built by concatenation, and reading such a string
    // one character at a time (charCodeAt) cost 3 500 instructions for a 55-character key, encoding it and
    // reading words 2 200 (callgrind, node 20).
    let bytes: Uint8Array;
    let length: number;
    let view: DataView;
    if (typeof content === 'string' && content.length <= SCRATCH_CHARS) {
      // Encoded into a buffer kept for the purpose, read through a view kept with it: a new buffer per
      // delivery cost five times as much, and a new DataView alone costs more than hashing a short key.
      bytes = this.#scratch ??= new Uint8Array(SCRATCH_CHARS * 3);
      view = this.#scratchView ??= new DataView(bytes.buffer);
      length = encoder.encodeInto(content, bytes).written;
    } else {
      bytes = typeof content === 'string' ? utf8Bytes(content) : content;
      length = bytes.length;
      view = new DataView(bytes.buffer, bytes.byteOffset, length);
    }
    let a = this.#seedA;
    let b = this.#seedB;
    let i = 0;
    // Four bytes at a time (unaligned little-endian reads), each word scrambled as murmur3 does before it
    // enters the lanes: twice as fast as a byte at a time on a 1 KB body.
    for (const end = length - 3; i < end; i += 4) {
      let word = Math.imul(view.getInt32(i, true), 0xcc9e2d51);
      word = Math.imul((word << 15) | (word >>> 17), 0x1b873593);
      a = Math.imul(a ^ word, 0x01000193);
      b = Math.imul(((b << 13) | (b >>> 19)) ^ word, 0x5bd1e995);
    }
    for (; i < length; i++) {
      const byte = bytes[i] as number;
      a = Math.imul(a ^ byte, 0x01000193);
      b = Math.imul(b ^ byte, 0x5bd1e995);
    }
    this.#fpA = finalize(a);
    this.#fpB = finalize(b);
    this.#fpLength = length;
  }

  /** The index place holding the current fingerprint, or -1. */
  #find(): number {
    const index = this.#index;
    let place = this.#fpA & this.#mask;
    for (;;) {
      const entry = index[place * 2] as number;
      if (entry === 0) return -1;
      if (index[place * 2 + 1] === this.#fpA) {
        const slot = entry - 1;
        if (this.#laneB[slot] === this.#fpB && this.#length[slot] === this.#fpLength) return place;
      }
      place = (place + 1) & this.#mask;
    }
  }

  /** Empties an index place and shifts later entries of the probe run back, so none is cut off. */
  #unindex(place: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let hole = place;
    let next = place;
    for (;;) {
      next = (next + 1) & mask;
      const entry = index[next * 2] as number;
      if (entry === 0) break;
      const laneA = index[next * 2 + 1] as number;
      // The entry may move into the hole only if its home is not inside (hole, next]; places are counted from
      // the hole, round the end of the table.
      const home = (laneA - hole) & mask;
      const stays = home !== 0 && home <= ((next - hole) & mask);
      if (!stays) {
        index[hole * 2] = entry;
        index[hole * 2 + 1] = laneA;
        hole = next;
      }
    }
    index[hole * 2] = 0;
  }

  #forgetOldest(): void {
    const slot = this.#oldest;
    if (this.#live[slot] === 1) {
      this.#live[slot] = 0;
      // The oldest live entry sits at its home place: every other indexed entry came after it, and removing
      // by backward shifting leaves the index as if the removed entries had never been added (Knuth's
      // Algorithm R), so it was added to an index holding nothing else.
      this.#unindex((this.#laneA[slot] as number) & this.#mask);
    }
    this.#oldest = (slot + 1) % this.#maxKeys;
    this.#count--;
  }

  #forgetExpired(now: number): void {
    while (this.#count > 0 && now - (this.#times[this.#oldest] as number) >= this.#windowMs) this.#forgetOldest();
  }
}

/** murmur3's 32-bit finalizer: every input bit affects every output bit (the index uses the low ones). */
function finalize(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
