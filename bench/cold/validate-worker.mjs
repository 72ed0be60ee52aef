// Validation cost of a message_sent, as a Worker pays it: bench/cold.mjs bundles this for workerd (worker
// conditions, no nodejs_compat) and imports the same bundle in Node. Workers' clock moves only across I/O, so
// each timing ends past a timer.
import { safeParseWebhook } from 'chat-webhooks';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

export async function nsPerValidation(body, count) {
  for (let i = 0; i < 20_000; i++) safeParseWebhook(body);
  await tick();
  const start = Date.now();
  for (let i = 0; i < count; i++) if (!safeParseWebhook(body).success) throw new Error('rejected');
  await tick();
  return ((Date.now() - start - 1) * 1e6) / count;
}

export default {
  async test() {
    // BODY is the fixture's text, put in by the bundler.
    console.log(`VALIDATION_NS ${await nsPerValidation(BODY, 200_000)}`);
  },
};
