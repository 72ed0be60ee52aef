/**
 * What an entry says when an optional peer dependency it needs is missing: one sentence naming the entry, the
 * peer and the command that installs it, the same from `import`, `require()` and the CLI. Shared by both sides
 * of the runtime seam (node.ts loads peers; web.ts cannot, having no synchronous loader).
 */

/** The `code` of the error thrown when an optional peer is missing. */
export const MISSING_PEER = 'ERR_CHAT_WEBHOOKS_MISSING_PEER';

/** `chat-webhooks/postgres needs its optional peer pg: npm install pg`. */
export function missingPeerMessage(entry: string, missing: readonly string[]): string {
  const names = missing.length === 1 ? `peer ${missing[0]}` : `peers ${missing.slice(0, -1).join(', ')} and ${missing.at(-1)}`;
  return `${entry} needs its optional ${names}: npm install ${missing.join(' ')}`;
}

/** The error for missing peers: an `Error` whose `code` is MISSING_PEER and whose `peers` are the missing ones. */
export function missingPeerError(entry: string, missing: readonly string[], cause?: unknown): Error {
  const error = new Error(missingPeerMessage(entry, missing), cause === undefined ? undefined : { cause });
  return Object.assign(error, { code: MISSING_PEER, entry, peers: [...missing] });
}

/**
 * Whether loading `peer` failed because the peer itself is not installed, not one of its own imports:
 * `require()` says MODULE_NOT_FOUND, `import()` ERR_MODULE_NOT_FOUND, and both name the missing module first.
 */
export function notInstalled(error: unknown, peer: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && String(message).split('\n')[0]!.includes(`'${peer}'`);
}
