/** The Redis inbox's connection: ioredis (an optional peer), a client given or one made from a URL or options. */
import type * as IORedis from 'ioredis';
import { requirePeers } from '#platform';
import type { RedisClientLike, RedisConnectionOptions } from './options.js';

// Loaded as this module is: without it, importing chat-webhooks/redis says what to install.
const [{ Redis }] = requirePeers('chat-webhooks/redis', ['ioredis']) as [typeof IORedis];
export type Redis = IORedis.Redis;
type RedisOptions = IORedis.RedisOptions;

/** The client to use, and whether the inbox made it (and so closes it). */
export function connect({ url, connection }: { url?: string; connection?: RedisClientLike | RedisConnectionOptions }): { redis: Redis; owned: boolean } {
  if (connection instanceof Redis) return { redis: connection, owned: false };
  const given = connection as RedisOptions | undefined;
  // Commands wait for a reconnection however long it takes (the inbox itself refuses work while Redis is
  // down, so nothing piles up). A socket closed while Redis is unreachable waits disconnectTimeout (2 s by
  // default) before it is destroyed, and holds the process.
  const defaults: RedisOptions = { maxRetriesPerRequest: null, disconnectTimeout: 200 };
  if (url) return { redis: new Redis(url, { ...defaults, ...given }), owned: true };
  if (given) return { redis: new Redis({ ...defaults, ...given }), owned: true };
  throw new TypeError('redisInbox needs `url` (redis://host:6379) or `connection` (an ioredis client or its options).');
}
