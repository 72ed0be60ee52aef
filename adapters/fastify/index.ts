/**
 * Fastify adapter (Fastify 5):
 *
 *   await app.register(fastifyWebhooks, { webhooks });                      // POST /webhooks
 *   await app.register(fastifyWebhooks, { webhooks, prefix: '/hooks', path: '/chat' }); // POST /hooks/chat
 *
 * The plugin is deliberately not wrapped with fastify-plugin: the route lives in its own encapsulated
 * context whose only content-type parser hands the receiver a reader over the request stream. Fastify
 * therefore never parses, buffers or size-checks a delivery, so the receiver answers every row of the
 * status table itself (405 for other methods, 415 for other content types, 413 at `maxBodyBytes` while
 * streaming, unauthenticated bodies never read), and the rest of the app keeps its own parsers and limits.
 */
import type { FastifyPluginAsync } from 'fastify';
import { rejectUnknownOptions, WebhookError } from '../../src/dispatch/index.js';
import { type BodyReader, type Webhooks } from '../../src/receive/index.js';
import { lingerIfClosing } from '../shared/lingering-close.js';
import { nodeHeaders } from '../shared/node-request.js';
import { nodeBodyReader } from '../shared/stream-reader.js';
import { requireReceiver } from '../shared/receiver-check.js';

export interface FastifyWebhooksOptions {
  /** The receiver from `createWebhooks`. */
  webhooks: Webhooks;
  /** The route, relative to the `prefix` given to `register` as for any Fastify route. Default `/webhooks`. */
  path?: string;
}

/**
 * A Fastify plugin for the receiver: registers its route (every method: the receiver answers 405 itself) and
 * reads the raw body itself.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { createWebhooks } from 'chat-webhooks';
 * import { fastifyWebhooks } from 'chat-webhooks/fastify';
 *
 * const webhooks = createWebhooks({ auth: { username: 'app', password: process.env.WEBHOOK_PASSWORD! } });
 * webhooks.on('message_sent', (event) => console.log(event.data.message.id));
 *
 * const app = Fastify();
 * await app.register(fastifyWebhooks, { webhooks, path: '/webhooks' });
 * await app.listen({ port: 3000 });
 * ```
 */
export const fastifyWebhooks: FastifyPluginAsync<FastifyWebhooksOptions> = async (fastify, options) => {
  // Besides its own, the options Fastify's register() takes for any plugin.
  rejectUnknownOptions('fastifyWebhooks', options, ['webhooks', 'path', 'prefix', 'logLevel', 'logSerializers']);
  const { webhooks, path = '/webhooks' } = options ?? {};
  requireReceiver('fastifyWebhooks', 'app.register(fastifyWebhooks, { webhooks, path })', webhooks);

  // Only this plugin's context loses the parsers; '*' also catches requests without a Content-Type. The
  // payload may be a stream a preParsing hook substituted for the request: it is read the same way.
  fastify.removeAllContentTypeParsers();
  // Also under JSON's own name: Fastify caches the parser it finds for a named type, but looks the catch-all
  // up afresh (parsing the Content-Type) on every request.
  fastify.addContentTypeParser(['application/json', '*'], (_request, payload, done) => done(null, nodeBodyReader(payload)));

  // The route with the register() prefix, for telemetry's `http.route`.
  const handleOptions = { route: `${fastify.prefix}${path}` };
  // Every method, so that the receiver (not Fastify's 404) answers 405 to a GET.
  fastify.all(path, (request, reply) => {
    // Fastify runs no parser for GET, HEAD or an empty body: then there is nothing to read.
    const body = typeof request.body === 'function' ? (request.body as BodyReader) : undefined;
    webhooks.respond({ method: request.method, headers: nodeHeaders(request.raw), body }, (response) => {
      lingerIfClosing(request.raw, response);
      reply.code(response.status).headers(response.headers).send(response.body);
    }, handleOptions);
  });
};
