/**
 * The platform: what differs between runtimes, behind package.json's `#platform` import (node.ts on Node,
 * web.ts on Workers, Deno and browsers: digests, random values, the UTF-8 check, loading optional peers), and
 * what both sides share: sha.ts (digests in plain JavaScript), peer.ts (the missing-peer sentence), backoff.ts
 * (the one retry backoff), sleep.ts (the abortable wait between tries). The rest of the code imports `#platform` or these files directly; this one says
 * what the folder is.
 */
export { backoffMs, type BackoffRange } from './backoff.js';
export { sleep } from './sleep.js';
export { MISSING_PEER, missingPeerError, missingPeerMessage, notInstalled } from './peer.js';
