/**
 * Every module of chat-webhooks/api loads, imported inside a test. The other suites import them at the top, where
 * a module that throws while loading (a zod schema zod refuses to build, such as a discriminated union whose
 * option lost its discriminator) fails the whole file before any test: a plain `vitest` run reports that, but
 * Stryker's vitest runner counts such a file as "no test failed", so a mutant that breaks a schema's
 * construction would pass for a survivor. Here the same failure is a failed test.
 */
import { describe, expect, it } from 'vitest';

describe('chat-webhooks/api modules load', () => {
  it('form.ts builds its schemas', async () => {
    const module = await import('../../src/api/form.js');
    expect(module.formFieldSchema.safeParse({ elementType: 'label', elementId: 'l', text: 'x' }).success).toBe(true);
    expect(module.buttonActionSchema.safeParse({ actionType: 'customAction' }).success).toBe(true);
  });

  it('message.ts, webhook-config.ts, app-create.ts build theirs', async () => {
    const [message, webhook, app] = await Promise.all([
      import('../../src/api/message.js'),
      import('../../src/api/webhook-config.js'),
      import('../../src/api/app-create.js'),
    ]);
    expect(message.messageDataSchema.safeParse({ text: 'hi' }).success).toBe(true);
    expect(webhook.webhookConfigSchema.safeParse({ id: 'i', name: 'n', webhookURL: 'https://x.example' }).success).toBe(true);
    expect(app.appCreateSchema.safeParse({ name: 'n', region: 'us' }).success).toBe(true);
  });

  it('chat-client.ts builds its answer schemas', async () => {
    const { userListSchema } = await import('../../src/api/chat-client.js');
    expect(userListSchema.safeParse({ data: [] }).success).toBe(true);
  });
});
