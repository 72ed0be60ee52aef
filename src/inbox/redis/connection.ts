/** The Redis inbox's connection: ioredis (an optional peer), a client given or one made from a URL or options. */
import type * as IORedis from 'ioredis';
import { requirePeers } from '#platform';

// Loaded as this module is: without it, importing chat-webhooks/redis says what to install.
const [{ Redis }] = requirePeers('chat-webhooks/redis', ['ioredis']) as [typeof IORedis];
export type Redis = IORedis.Redis;
type RedisOptions = IORedis.RedisOptions;

/**
 * An ioredis client, as far as these declarations need to say: they compile without ioredis installed
 * (`skipLibCheck: false`). An ioredis `Redis` instance is one.
 */
export interface RedisClientLike {
  readonly status: string;
  duplicate(...args: never[]): unknown;
  quit(...args: never[]): Promise<unknown>;
}

/**
 * ioredis connection options (`RedisOptions`: host, port, password, tls, ...), handed to `new Redis()` as they
 * are; described loosely so that these declarations compile without ioredis installed.
 */
export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  // `any`, not `unknown`: an ioredis `RedisOptions` (an interface, with no index signature) is assignable only to this.
  [option: string]: any;
}

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
