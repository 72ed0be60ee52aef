/**
 * `--set path=value` and `--add path=value` overrides: a path from the envelope root as validation errors
 * print it (`data.message.data.text`, `data.all_occupants.0.name`) and a value. `--set` changes a field the
 * event has: a path it does not have is a typo until shown otherwise (`data.mesage.id` would otherwise add a
 * field nobody reads and send the event unchanged), so it is refused with the closest paths the event has.
 * `--add` says the field is new, and creates it and the objects along its path.
 * Where the field already holds a string the value stays text (ids like "1421" stay strings); anywhere else
 * it is read as JSON when it parses (`42`, `true`, `{"a":1}`) and as text when it does not.
 */
import { usageError } from './errors.js';
import { closest, distance } from '../text/suggest.js';

export type OverrideMode = 'set' | 'add';

export interface Override {
  path: string[];
  raw: string;
  /** `set`: the field must exist; `add`: it is created. */
  mode: OverrideMode;
}

/** Parses one `path=value`; a usage error when it has no `=` or no path. */
export function parseOverride(text: string, mode: OverrideMode = 'set'): Override {
  const equals = text.indexOf('=');
  const path = equals === -1 ? '' : text.slice(0, equals).trim();
  if (path === '') throw usageError(`--${mode} expects path=value (like data.message.data.text=hello), got "${text}".`);
  const segments = path.split('.');
  if (segments.some((segment) => segment === '' || segment === '__proto__')) {
    throw usageError(`--${mode} path "${path}" has an empty or forbidden segment.`);
  }
  return { path: segments, raw: text.slice(equals + 1), mode };
}

/** Every path the event has (objects and leaves), as `--set` writes them. */
function pathsOf(node: unknown, prefix = ''): string[] {
  if (typeof node !== 'object' || node === null) return [];
  return Object.keys(node).flatMap((key) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...pathsOf((node as Record<string, unknown>)[key], path)];
  });
}

function noSuchPath(target: Record<string, unknown>, override: Override, missing: string): never {
  const path = override.path.join('.');
  const depth = override.path.length;
  const sameDepth = pathsOf(target).filter((candidate) => candidate.split('.').length === depth);
  // Only the nearest: a near miss names the one field meant, not three of its neighbours.
  const score = (candidate: string) => distance(path.toLowerCase(), candidate.toLowerCase());
  const near = closest(path, sameDepth).filter((candidate, _, [first]) => score(candidate) === score(first as string));
  const hint = near.length === 0 ? '' : ` Did you mean ${near.map((candidate) => `"${candidate}"`).join(' or ')}?`;
  throw usageError(`--set ${path}: the event has no "${missing}".${hint} To add a new field, use --add ${path}=${override.raw}.`);
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

const has = (node: Container, segment: string) => Object.hasOwn(node, segment);

/** Applies the override in place; `add` creates objects along the path where nothing is. */
export function applyOverride(target: Record<string, unknown>, override: Override): void {
  let node: Container = target;
  const { path } = override;
  path.forEach((segment, index) => {
    if (override.mode === 'set' && !has(node, segment)) noSuchPath(target, override, path.slice(0, index + 1).join('.'));
    if (index === path.length - 1) return;
    const next: unknown = (node as Record<string, unknown>)[segment];
    if (next === undefined || next === null) {
      const created = {};
      (node as Record<string, unknown>)[segment] = created;
      node = created;
    } else if (isContainer(next)) {
      node = next;
    } else {
      throw usageError(`--${override.mode} ${path.join('.')}: "${segment}" holds ${JSON.stringify(next)}, not an object.`);
    }
  });
  const last = path[path.length - 1] as string;
  (node as Record<string, unknown>)[last] = valueFor(override.raw, (node as Record<string, unknown>)[last]);
}

/** Collects repeated `--set` options for commander. */
export function collectOverride(value: string, previous: Override[] = []): Override[] {
  return [...previous, parseOverride(value, 'set')];
}

/** Collects repeated `--add` options for commander. */
export function collectAddition(value: string, previous: Override[] = []): Override[] {
  return [...previous, parseOverride(value, 'add')];
}
