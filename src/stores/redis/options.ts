/** The Redis inbox's connection options, public (re-exported by chat-webhooks/redis) and free of ioredis's types. */
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
