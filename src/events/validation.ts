/**
 * What generated validators call at validation time, as zod judges: src/events/generated/validators.ts (written
 * at build time) and src/compile/ (at run time) share these, so neither needs zod to answer.
 */
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
