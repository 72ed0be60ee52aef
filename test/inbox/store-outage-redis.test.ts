/**
 * Redis going away under a worker (killed, then started again on its port and its AOF): one warning, one
 * "answers again", `health()` failing meanwhile (test/inbox/store-outage.ts). It used to log nothing: a claim
 * in flight when the connection went waited in ioredis's queue until Redis was back.
 */
import { afterEach, describe, it } from 'vitest';
import { redisInbox } from '../../src/stores/redis/index.js';
import { startRedis, type RedisServer } from '../support/redis-server.js';
import { runOutage } from './store-outage.js';

const servers: RedisServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

describe('a worker on Redis that goes away and comes back', () => {
  it('warns once, says once that it is back, and is failing meanwhile', async () => {
    let server = await startRedis();
    servers.push(server);
    const { port, dir } = server;
    const inbox = redisInbox({ url: server.url, prefix: 'outage' });
    try {
      await runOutage({
        inbox,
        downMs: 2500,
        breakStore: async () => {
          const exited = new Promise((resolve) => server.process.once('exit', resolve));
          server.process.kill('SIGKILL');
          await exited;
        },
        restoreStore: async () => {
          server = await startRedis([], { port, dir });
          servers.push(server);
        },
      });
    } finally {
      await inbox.close();
    }
  }, 30_000);
});
