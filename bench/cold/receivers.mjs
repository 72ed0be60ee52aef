// The receivers bench/cold.mjs bundles: the minimal ones a Lambda or a Worker would deploy.
export const receivers = {
  // createWebhooks + lambdaHandler, one handler: issue 37's minimal Lambda receiver.
  'ours-lambda': `
    import { createWebhooks } from 'chat-webhooks';
    import { lambdaHandler } from 'chat-webhooks/lambda';
    const webhooks = createWebhooks({ auth: { username: 'user', password: 'pass' } });
    webhooks.on('message_sent', () => {});
    export const handler = lambdaHandler(webhooks);`,
  'ours-fetch': `
    import { createWebhooks } from 'chat-webhooks';
    import { fetchHandler } from 'chat-webhooks/fetch';
    const webhooks = createWebhooks({ auth: { username: 'user', password: 'pass' } });
    webhooks.on('message_sent', () => {});
    export default { fetch: fetchHandler(webhooks) };`,
  // The same receiver with @octokit/webhooks: verify the signature, run the one handler, answer.
  octokit: `
    import { Webhooks } from '@octokit/webhooks';
    const webhooks = new Webhooks({ secret: 'secret' });
    webhooks.on('issues.opened', () => {});
    export const handler = async (event) => {
      await webhooks.verifyAndReceive({
        id: event.headers['x-github-delivery'],
        name: event.headers['x-github-event'],
        payload: event.body,
        signature: event.headers['x-hub-signature-256'],
      });
      return { statusCode: 200, body: 'OK' };
    };`,
};
