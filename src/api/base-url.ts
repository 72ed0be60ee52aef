/**
 * The chat interface's base URL (spec 4 and 9): `https://<appId>.api-<region>.<domain>/v3`, and the checks on
 * what goes into it, made when a client is created so a typo fails at start-up rather than at the first call.
 */
import { ValidationError } from './errors.js';

export const regions = ['us', 'eu', 'in'] as const;
/** A hosting region (spec 1.8). */
export type Region = (typeof regions)[number];
/** A region as callers may write it: any case (`'EU'` from a dashboard is fine). */
export type RegionInput = Region | Uppercase<Region> | (string & {});

/**
 * The domain the chat interface is served from. The spec writes it as a placeholder (`{domain}`); this is the
 * hosted service's. Pass `domain` (or a whole `baseUrl`) to reach another deployment.
 */
export const DEFAULT_DOMAIN = 'cometchat.io';

/** The chat interface version in the path (spec 9.1). */
export const API_VERSION = 'v3';

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const DOMAIN = /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/i;

/** `'EU'` → `'eu'`; anything that is not one of the three regions is refused. */
export function normalizeRegion(region: unknown, what: string): Region {
  const lower = typeof region === 'string' ? region.trim().toLowerCase() : undefined;
  if (lower && (regions as readonly string[]).includes(lower)) return lower as Region;
  throw new ValidationError(`${what}: region must be one of ${regions.join(', ')} (any case); got ${describeValue(region)}.`);
}

/** `https://<appId>.api-<region>.<domain>/v3`, after checking each part. */
export function chatBaseUrl(appId: unknown, region: unknown, domain: unknown, what: string): string {
  const host = domain ?? DEFAULT_DOMAIN;
  if (typeof host !== 'string' || !DOMAIN.test(host)) {
    throw new ValidationError(`${what}: domain must be a host name such as "${DEFAULT_DOMAIN}"; got ${describeValue(domain)}.`);
  }
  return `https://${checkAppId(appId, what).toLowerCase()}.api-${normalizeRegion(region, what)}.${host.toLowerCase()}/${API_VERSION}`;
}

/** The app id goes into the host name: it must be usable as one label. */
export function checkAppId(appId: unknown, what: string): string {
  if (typeof appId !== 'string' || !HOST_LABEL.test(appId)) {
    throw new ValidationError(
      `${what}: appId must be the app id from the dashboard, usable as a host name label (letters, digits and inner hyphens, at most 63); got ${describeValue(appId)}.`,
    );
  }
  return appId;
}

/** An absolute http(s) URL without credentials, returned without a trailing slash. */
export function checkBaseUrl(baseUrl: unknown, what: string): string {
  const url = typeof baseUrl === 'string' && URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    const shown = url ? Object.assign(url, { username: '', password: '' }).href : baseUrl;
    throw new ValidationError(`${what}: baseUrl must be an absolute http(s) URL; got ${describeValue(shown)}.`);
  }
  if (url.username || url.password) {
    throw new ValidationError(`${what}: baseUrl must not carry credentials; the client sends its own headers.`);
  }
  if (url.search || url.hash) throw new ValidationError(`${what}: baseUrl must not have a query or a fragment.`);
  return url.href.replace(/\/+$/, '');
}

/** A non-empty string credential; the message names the option, never its value. */
export function checkSecret(value: unknown, name: string, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ValidationError(`${what}: ${name} is required: a non-empty string${value === undefined ? ' (is the environment variable set?)' : ''}.`);
  }
  if (/[\r\n\0]/.test(value)) throw new ValidationError(`${what}: ${name} contains a line break or NUL, which no header can carry.`);
  return value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return value === undefined ? 'nothing' : typeof value;
}
