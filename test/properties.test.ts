/**
 * Property-based tests of the receiver: arbitrary bytes and arbitrary JSON never make `handle()` throw or
 * answer 5xx, and every valid event built from the schemas round-trips to its typed handler unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWebhooks, triggers, type ParsedWebhook, type Trigger } from '../src/index.js';
import { registry } from '../src/receive/schemas.js';
import { buildRequest } from '../src/testing/index.js';
import { arbitraryOf } from './support/arbitrary.js';

const auth = { username: 'platform', password: 's3cret' };

function receiver() {
  const webhooks = createWebhooks({ auth, logger: {}, dedupe: false });
  const received: ParsedWebhook[] = [];
  const errors: string[] = [];
  for (const trigger of triggers) webhooks.on(trigger, (event) => void received.push(event));
  webhooks.onUnknown((event) => void received.push(event));
  webhooks.onError((error) => void errors.push(error.code));
  return { webhooks, received, errors };
}

/** A valid event of the trigger, with the envelope fields the spec lists. */
function eventOf(trigger: Trigger) {
  const definition = registry[trigger];
  return fc.record(
    {
      trigger: fc.constant(trigger),
      data: arbitraryOf(definition.data),
      appId: fc.string({ maxLength: 10 }),
      region: fc.constantFrom('us', 'eu', 'in'),
      webhook: fc.string({ maxLength: 10 }),
      ...('envelopeType' in definition ? { type: fc.constant(definition.envelopeType) } : {}),
    },
    { requiredKeys: ['trigger', 'data'] },
  );
}

describe('handle() on arbitrary input', () => {
  it('never throws and never answers 5xx for arbitrary bytes', async () => {
    const { webhooks } = receiver();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 512 }), async (bytes) => {
        const response = await webhooks.handle(buildRequest(Buffer.from(bytes).toString('latin1'), { auth }));
        const fromBytes = await webhooks.handle({ ...buildRequest('', { auth }), body: bytes });
        for (const { status } of [response, fromBytes]) expect(status).toBeLessThan(500);
        await Promise.all([response.done, fromBytes.done]);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws and never answers 5xx for arbitrary JSON values, as text or pre-parsed', async () => {
    const { webhooks } = receiver();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const text = JSON.stringify(value);
        const asText = await webhooks.handle(buildRequest(text, { auth }));
        const parsed = await webhooks.handle({ ...buildRequest('', { auth }), body: value as object });
        expect(asText.status).toBeLessThan(500);
        expect(parsed.status).toBeLessThan(500);
        await Promise.all([asText.done, parsed.done]);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws and never answers 5xx for arbitrary envelopes of known triggers', async () => {
    const { webhooks } = receiver();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...triggers), fc.jsonValue(), async (trigger, data) => {
        const response = await webhooks.handle(buildRequest(JSON.stringify({ trigger, data }), { auth }));
        expect([200, 400]).toContain(response.status);
        await response.done;
      }),
      { numRuns: 300 },
    );
  });
});

describe('valid events built from the schemas', () => {
  it.each(triggers)('%s round-trips to its typed handler unchanged', async (trigger) => {
    const { webhooks, received, errors } = receiver();
    await fc.assert(
      fc.asyncProperty(eventOf(trigger), async (event) => {
        received.length = 0;
        const response = await webhooks.handle(buildRequest(JSON.stringify(event), { auth }));
        expect(response.status).toBe(200);
        await response.done;
        expect(errors).toEqual([]);
        expect(received).toEqual([event]);
      }),
      { numRuns: 40 },
    );
  });
});
