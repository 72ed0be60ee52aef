/**
 * Finding inbox entries by key for `inbox show` and `inbox retry <key>`. The Inbox port has no lookup by key,
 * so this reads each state's listing (up to SCAN_LIMIT entries each, which the CLI's stores answer quickly).
 */
import { escapeControl, type Inbox, type InboxListing } from '../index.js';
import { failure } from './errors.js';
import { didYouMean } from '../text/suggest.js';

/** How many entries of each state are looked through. */
export const SCAN_LIMIT = 100_000;
/** Dead first: the entries someone looks up are mostly those. */
const SCAN_ORDER = ['dead', 'pending', 'running', 'done'] as const;

/** The entries with these keys, by key; the keys not found are absent. */
export async function findEntries(inbox: Inbox, keys: readonly string[]): Promise<Map<string, InboxListing>> {
  const wanted = new Set(keys);
  const found = new Map<string, InboxListing>();
  for (const state of SCAN_ORDER) {
    if (found.size === wanted.size) break;
    for (const entry of await inbox.list({ state, limit: SCAN_LIMIT })) {
      if (wanted.has(entry.key) && !found.has(entry.key)) found.set(entry.key, entry);
    }
  }
  return found;
}

/** Every key the inbox lists, for a did-you-mean. */
async function knownKeys(inbox: Inbox): Promise<string[]> {
  const lists = await Promise.all(SCAN_ORDER.map((state) => inbox.list({ state, limit: SCAN_LIMIT })));
  return lists.flat().map((entry) => entry.key);
}

/** `No entry with key "x" in the sqlite inbox. Did you mean "y"?`, the keys escaped: the suggestions are stored keys, a sender's. */
export async function noSuchKey(inbox: Inbox, key: string): Promise<string> {
  const sentence = `No entry with key "${key}" in the ${inbox.kind} inbox.${didYouMean(key, await knownKeys(inbox))}`;
  return `${escapeControl(sentence)} See \`chat-webhooks inbox list\`.`;
}

/** The entry with this key, or a failure saying there is none. */
export async function entryOf(inbox: Inbox, key: string): Promise<InboxListing> {
  const entry = (await findEntries(inbox, [key])).get(key);
  if (!entry) throw failure(await noSuchKey(inbox, key));
  return entry;
}
