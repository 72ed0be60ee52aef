// The same TypeScript application, compiled under each moduleResolution of typescript/*/tsconfig.json
// (test/consumers/run.mjs copies it into each project) and then run: the types must resolve to the
// package's real declarations (the @ts-expect-error lines fail if they resolve to `any`), and the
// emitted import or require must load.
import { createWebhooks, WebhookError, type EventOf, type WebhookEvent } from 'chat-webhooks';
import { expressMiddleware } from 'chat-webhooks/express';
import { fastifyWebhooks } from 'chat-webhooks/fastify';
import { fetchHandler } from 'chat-webhooks/fetch';
import { lambdaHandler } from 'chat-webhooks/lambda';
import { nodeMiddleware } from 'chat-webhooks/node';
import { buildRequest, createTestEvent } from 'chat-webhooks/testing';

const auth = { username: 'consumer', password: 'secret' };
const webhooks = createWebhooks({ auth });

const senders: string[] = [];
webhooks.on('message_sent', (event) => {
  senders.push(event.data.message.sender);
  // @ts-expect-error sender is a string
  const wrong: number = event.data.message.sender;
  void wrong;
});
function misspelled(): void {
  // @ts-expect-error a misspelled trigger does not compile (and throws at run time)
  webhooks.on('message_snet', () => {});
}
webhooks.onAny((event) => void event.trigger);
const anyEvent: WebhookEvent | undefined = undefined;
void anyEvent;

const event: EventOf<'message_sent'> = createTestEvent('message_sent', { data: { message: { sender: 'alice' } } });
const adapters = [expressMiddleware(webhooks), fastifyWebhooks, fetchHandler(webhooks), lambdaHandler(webhooks), nodeMiddleware(webhooks)];

async function main(): Promise<void> {
  const response = await webhooks.handle(buildRequest(event, { auth }));
  await response.done;
  await webhooks.close();
  if (response.status !== 200 || senders.join() !== 'alice') throw new Error(`got ${response.status}, ${senders.join()}`);
  let refused: unknown;
  try {
    misspelled();
  } catch (error) {
    refused = error;
  }
  if (!(refused instanceof Error) || !refused.message.includes('message_snet')) throw new Error('a misspelled trigger was taken');
  refused = undefined;
  try {
    createTestEvent('message_sent', { data: { message: { id: 42 as unknown as string } } });
  } catch (error) {
    refused = error;
  }
  if (!(refused instanceof WebhookError) || refused.code !== 'invalid_payload') throw new Error(`not refused: ${String(refused)}`);
  console.log(`typescript consumer ok (${adapters.length} adapters loaded)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
