/**
 * `--set path=value` overrides: a path from the envelope root as validation errors print it
 * (`data.message.data.text`, `data.all_occupants.0.name`) and a value. Where the field already holds a
 * string the value stays text (ids like "1421" stay strings); anywhere else it is read as JSON when it
 * parses (`42`, `true`, `{"a":1}`) and as text when it does not.
 */
import { usageError } from './errors.js';

export interface Override {
  path: string[];
  raw: string;
}

/** Parses one `path=value`; a usage error when it has no `=` or no path. */
export function parseOverride(text: string): Override {
  const equals = text.indexOf('=');
  const path = equals === -1 ? '' : text.slice(0, equals).trim();
  if (path === '') throw usageError(`--set expects path=value (like data.message.data.text=hello), got "${text}".`);
  const segments = path.split('.');
  if (segments.some((segment) => segment === '' || segment === '__proto__')) {
    throw usageError(`--set path "${path}" has an empty or forbidden segment.`);
  }
  return { path: segments, raw: text.slice(equals + 1) };
}

function valueFor(raw: string, current: unknown): unknown {
  if (typeof current === 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/** Applies the override in place, creating objects along the path where nothing is. */
export function applyOverride(target: Record<string, unknown>, override: Override): void {
  let node: Container = target;
  const { path } = override;
  for (const segment of path.slice(0, -1)) {
    const next: unknown = (node as Record<string, unknown>)[segment];
    if (next === undefined || next === null) {
      const created = {};
      (node as Record<string, unknown>)[segment] = created;
      node = created;
    } else if (isContainer(next)) {
      node = next;
    } else {
      throw usageError(`--set ${path.join('.')}: "${segment}" holds ${JSON.stringify(next)}, not an object.`);
    }
  }
  const last = path[path.length - 1] as string;
  (node as Record<string, unknown>)[last] = valueFor(override.raw, (node as Record<string, unknown>)[last]);
}

/** Collects repeated `--set` options for commander. */
export function collectOverride(value: string, previous: Override[] = []): Override[] {
  return [...previous, parseOverride(value)];
}
