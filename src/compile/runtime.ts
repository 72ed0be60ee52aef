/** The helpers both kinds of validator call at validation time, as zod judges. */
import { z } from 'zod';
import type { Schema } from './tree.js';

export type Validator = (value: unknown) => boolean;

/** zod's `util.isPlainObject`, which records require. */
export function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const ctor = (value as { constructor?: unknown }).constructor;
  if (typeof ctor !== 'function') return true;
  const prototype: unknown = ctor.prototype;
  if (typeof prototype !== 'object' || prototype === null || Array.isArray(prototype)) return false;
  return Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf');
}

/** A plain z.string() key schema rejects symbol keys; zod reads only enumerable own keys. */
export function hasEnumerableSymbol(value: object): boolean {
  const symbols = Object.getOwnPropertySymbols(value);
  for (let i = 0; i < symbols.length; i++) {
    if (Object.prototype.propertyIsEnumerable.call(value, symbols[i]!)) return true;
  }
  return false;
}

/** A sub-schema the compiler leaves to zod. */
export const zodJudge = (schema: Schema): Validator => (value) => z.safeParse(schema, value).success;
