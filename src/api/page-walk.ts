/**
 * The guard of a walk over numbered pages (`users.iterate`/`each`): it ends the walk with an `ApiError` of
 * code `pagination_loop` when the service shows a cycle, however long, or past a hard page count.
 *
 * A cycle is a page whose users (their ids, in order) were already seen on an earlier page, or a page number
 * the service already reported in `meta.pagination.current_page` (it ignores `page`, or clamps it). The
 * `meta.cursor` the platform adds is not a page position (it describes the whole listing and is the same on
 * every page), so it is not compared. Pages are remembered as 53-bit hashes, so a walk of 10 000 pages keeps
 * about 10 000 numbers, whatever the page size.
 */
import { ApiError, ValidationError, redact } from './errors.js';

/** Default of `maxPages`: 10 000 pages (a million users at 100 per page). */
export const DEFAULT_MAX_PAGES = 10_000;

export function checkMaxPages(maxPages: unknown, what: string): number {
  // Number.isSafeInteger is false for anything that is not a number, so no typeof test is needed.
  if (!Number.isSafeInteger(maxPages) || (maxPages as number) < 1) {
    throw new ValidationError(`${what}: maxPages must be a whole number of pages, at least 1.`);
  }
  return maxPages as number;
}

export class PageWalk {
  private readonly seenPages = new Map<number, number>();
  private readonly seenNumbers = new Map<string, number>();
  private pagesRead = 0;

  constructor(private readonly options: { maxPages: number; url: string; secrets: readonly string[] }) {}

  /** Throws before the request that would read one page more than `maxPages`. */
  beforeRequest(page: number): void {
    if (this.pagesRead >= this.options.maxPages) {
      throw this.loop(page, `read ${this.pagesRead} pages without reaching the last one (maxPages is ${this.options.maxPages})`);
    }
    this.pagesRead++;
  }

  /** Throws when this page's users, or the page number the service reports, were seen on an earlier page. */
  check(page: number, ids: readonly string[], reportedPage: number | string | undefined): void {
    const fingerprint = hash(ids.join('\u0000'));
    const earlier = this.seenPages.get(fingerprint);
    if (earlier !== undefined) throw this.loop(page, `page ${page} has the same users as page ${earlier}`);
    this.seenPages.set(fingerprint, page);
    if (reportedPage === undefined) return;
    const reported = String(reportedPage);
    const first = this.seenNumbers.get(reported);
    if (first !== undefined) throw this.loop(page, `page ${page} says it is page ${reported}, as page ${first} did`);
    this.seenNumbers.set(reported, page);
  }

  private loop(page: number, why: string): ApiError {
    const url = redact(this.options.url, this.options.secrets);
    return new ApiError(`GET ${url} pagination does not end: ${why}; stopped before walking it again`, {
      code: 'pagination_loop',
      method: 'GET',
      url: `${url}?page=${page}`,
      status: 200,
    });
  }
}

/** cyrb53: a fast 53-bit string hash; two different pages share one by a chance near 2^-53. */
function hash(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
