/**
 * `telemetry` as an option: checked when the receiver or worker is made; `openTelemetry()` without an SDK is
 * the API's no-op (deliveries answered, nothing stored beside the entry); `recordBodies` opt-in.
 */
import { SpanKind } from '@opentelemetry/api';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigurationError, createWebhooks, createWorker, memoryInbox, type Telemetry, type WebhooksOptions, type WorkerOptions } from '../../src/index.js';
import { openTelemetry } from '../../src/telemetry/otel/index.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { sdk, waitFor } from './sdk.js';

describe('the telemetry option', () => {
  it('refuses what is not telemetry, naming the option', () => {
    expect(() => createWebhooks({ auth: false, telemetry: {} as Telemetry })).toThrow(ConfigurationError);
    expect(() => createWebhooks({ auth: false, telemetry: {} as Telemetry })).toThrow(/telemetry.*openTelemetry\(\)/);
    expect(() => createWorker({ inbox: memoryInbox(), telemetry: 'otel' as unknown as Telemetry })).toThrow(/telemetry/);
  });

  it('is typed: openTelemetry() is a Telemetry for receivers and workers', () => {
    expectTypeOf(openTelemetry()).toEqualTypeOf<Telemetry>();
    expectTypeOf<WebhooksOptions['telemetry']>().toEqualTypeOf<Telemetry | undefined>();
    expectTypeOf<WorkerOptions['telemetry']>().toEqualTypeOf<Telemetry | undefined>();
    // @ts-expect-error recordBodies is a boolean
    openTelemetry({ recordBodies: 'yes' });
  });

  it('without an SDK registered, answers as usual and stores no traceparent (no span is recorded)', async () => {
    const inbox = memoryInbox();
    const webhooks = createWebhooks({ auth: false, inbox, consume: false, telemetry: openTelemetry(), logLevel: 'silent' });
    expect((await webhooks.handle(buildRequest(createTestEvent('message_sent')))).status).toBe(200);
    const claim = await inbox.claim({ leaseMs: 1000, waitMs: 0 });
    expect(claim?.trigger).toBe('message_sent');
    expect(claim && 'traceparent' in claim).toBe(false);
    await webhooks.close();
  });

  it('records the event on the server span only with recordBodies', async () => {
    for (const recordBodies of [false, true]) {
      const otel = sdk({ recordBodies });
      const webhooks = createWebhooks({ auth: false, telemetry: otel.telemetry, logLevel: 'silent' });
      const event = createTestEvent('message_sent', { data: { message: { data: { text: 'the words' } } } });
      await webhooks.handle(buildRequest(event));
      await waitFor(() => otel.spans().some((span) => span.kind === SpanKind.SERVER));
      const server = otel.spans().find((span) => span.kind === SpanKind.SERVER);
      if (recordBodies) expect(String(server?.attributes['chat_webhooks.event'])).toContain('the words');
      else expect(server?.attributes['chat_webhooks.event']).toBeUndefined();
      await webhooks.close();
      await otel.shutdown();
    }
  });

  it('counts an unknown trigger under one value, so a sender cannot grow the metric’s series', async () => {
    const otel = sdk();
    const webhooks = createWebhooks({ auth: false, telemetry: otel.telemetry, logLevel: 'silent' });
    webhooks.onUnknown(() => undefined);
    await webhooks.handle(buildRequest({ trigger: 'brand_new_trigger_1', data: {} }));
    await webhooks.handle(buildRequest({ trigger: 'brand_new_trigger_2', data: {} }));
    const points = await otel.points('chat_webhooks.deliveries');
    expect(points.map((point) => point.attributes['chat_webhooks.trigger'])).toEqual(['_OTHER']);
    expect(points[0]?.value).toBe(2);
    await webhooks.close();
    await otel.shutdown();
  });
});
