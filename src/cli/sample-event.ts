/**
 * Realistic events for `send`: the trigger's fixture (through `createTestEvent`), with its ids made unique
 * to the event and its timestamps moved to now, so a receiver never takes two sends for one delivery.
 */
import { randomBytes } from 'node:crypto';
import { createTestEvent } from '../testing/index.js';
import type { Trigger } from '../index.js';

/** Fields that identify the event's subject; the same original id gets the same new one within an event. */
const ID_FIELDS = new Set(['id', 'messageId', 'sessionId', 'sessionid', 'tid']);
/** Epoch values in seconds (about 2001 to 2286) or milliseconds. */
const SECONDS = { min: 1e9, max: 1e10 };
const MILLISECONDS = { min: 1e12, max: 1e13 };

const isTimeField = (key: string) =>
  key === 'timestamp' || key === 'uts' || key.endsWith('At') || key.endsWith('_at') || key.endsWith('Time');

type Scale = 'seconds' | 'milliseconds' | undefined;

function scaleOf(value: unknown): Scale {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number') return undefined;
  if (number >= SECONDS.min && number < SECONDS.max) return 'seconds';
  if (number >= MILLISECONDS.min && number < MILLISECONDS.max) return 'milliseconds';
  return undefined;
}

/** Calls `visit` for every (object, key) pair below `node`. */
function walk(node: unknown, visit: (owner: Record<string, unknown>, key: string) => void): void {
  if (typeof node !== 'object' || node === null) return;
  for (const key of Object.keys(node)) {
    visit(node as Record<string, unknown>, key);
    walk((node as Record<string, unknown>)[key], visit);
  }
}

/** The latest timestamp of the event, in seconds. */
function latestSecond(event: object): number {
  let latest = 0;
  walk(event, (owner, key) => {
    const scale = isTimeField(key) ? scaleOf(owner[key]) : undefined;
    if (scale) latest = Math.max(latest, Number(owner[key]) / (scale === 'seconds' ? 1 : 1000));
  });
  return latest;
}

/** Shifts every timestamp by `shiftSeconds`, keeping each one's scale and type (number or digit string). */
function shiftTimes(event: object, shiftSeconds: number): void {
  walk(event, (owner, key) => {
    const value = owner[key];
    const scale = isTimeField(key) ? scaleOf(value) : undefined;
    if (!scale) return;
    const moved = Number(value) + Math.round(shiftSeconds * (scale === 'seconds' ? 1 : 1000));
    owner[key] = typeof value === 'string' ? String(moved) : moved;
  });
}

/** Numeric ids count up from the start time in microseconds: unique across runs unless a run makes 1000 a millisecond. */
let nextNumericId = Date.now() * 1000;

function renameIds(event: object, suffix: string, sequence: number): void {
  const renamed = new Map<string, string>();
  walk(event, (owner, key) => {
    const value = owner[key];
    if (!ID_FIELDS.has(key) || typeof value !== 'string') return;
    let fresh = renamed.get(value);
    if (fresh === undefined) {
      // Numeric ids stay numeric strings: a receiver may parse them.
      fresh = /^\d+$/.test(value) ? String(nextNumericId++) : `${value}-${suffix}-${sequence}`;
      renamed.set(value, fresh);
    }
    owner[key] = fresh;
  });
}

export interface SampleOptions {
  /** This event's place in the run (0-based): later events are later in time. */
  sequence: number;
  /** How many events the run sends. */
  count: number;
  /** Distinguishes this run's ids from another run's. */
  runId: string;
}

export const newRunId = () => randomBytes(3).toString('hex');

/** A fresh, valid event of the trigger: unique ids, timestamps ending at now (one second apart). */
export function sampleEvent(trigger: Trigger, { sequence, count, runId }: SampleOptions): Record<string, unknown> {
  const event = structuredClone(createTestEvent(trigger)) as Record<string, unknown>;
  renameIds(event, runId, sequence);
  const latest = latestSecond(event);
  if (latest > 0) shiftTimes(event, Math.floor(Date.now() / 1000) - latest - (count - 1 - sequence));
  return event;
}

/**
 * An event of a trigger this version does not know (`send --allow-unknown`), to exercise a receiver's
 * `onUnknown`: the envelope of a known event around a small `data` with an id of its own, so that each one
 * has its own key (for an unknown trigger, the digest of the body) and is not taken for a repeat.
 */
export function unknownSampleEvent(trigger: string, { sequence, runId }: SampleOptions): Record<string, unknown> {
  const { appId, region, webhook } = createTestEvent('message_sent') as unknown as Record<string, unknown>;
  const data = { id: `${runId}-${sequence}`, createdAt: Math.floor(Date.now() / 1000) };
  return { trigger, data, appId, region, webhook };
}
