/**
 * A request's `traceparent` is taken as W3C Trace Context says: version 00 is exactly 55 characters (junk
 * after it makes the header invalid, so the request starts a trace of its own); a later version may carry
 * more fields after a `-`, and its first four are read as version 00's.
 */
import { SpanKind } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhooks } from '../../src/index.js';
import { parseTraceparent } from '../../src/telemetry/otel/otel.js';
import { buildRequest, createTestEvent } from '../../src/testing/index.js';
import { sdk, waitFor } from './sdk.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const VALID = `00-${TRACE_ID}-${PARENT_ID}-01`;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('parseTraceparent', () => {
  it('takes a version-00 value of exactly 55 characters', () => {
    expect(VALID).toHaveLength(55);
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1, isRemote: true });
    expect(parseTraceparent(` ${VALID} `)?.traceId).toBe(TRACE_ID);
  });

  it.each([
    ['a field after it', `${VALID}-01`],
    ['junk after a dash', `${VALID}-junk`],
    ['a lone dash', `${VALID}-`],
    ['junk right after the flags', `${VALID}junk`],
    ['a second header joined to it', `${VALID},${VALID}`],
  ])('refuses a version-00 value with %s', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('takes a later version with more fields after a dash, or none, and refuses one with junk right after the flags', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${PARENT_ID}-01-what-comes-next`)?.spanId).toBe(PARENT_ID);
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-00`)?.traceFlags).toBe(0);
    expect(parseTraceparent(`01-${TRACE_ID}-${PARENT_ID}-01junk`)).toBeUndefined();
  });

  it('takes ids that merely end or start in zeros', () => {
    expect(parseTraceparent(`00-${TRACE_ID.slice(0, 30)}00-${PARENT_ID.slice(0, 14)}00-01`)?.spanId).toBe(`${PARENT_ID.slice(0, 14)}00`);
    expect(parseTraceparent(`00-00${TRACE_ID.slice(2)}-${PARENT_ID}-01`)?.traceId).toBe(`00${TRACE_ID.slice(2)}`);
  });

  it('refuses version ff, zero ids and upper-case hex', () => {
    expect(parseTraceparent(`ff-${TRACE_ID}-${PARENT_ID}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${'0'.repeat(32)}-${PARENT_ID}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE_ID}-${'0'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent(VALID.toUpperCase())).toBeUndefined();
  });
});

it('starts a trace of its own for a request whose version-00 traceparent has junk after it', async () => {
  const otel = sdk();
  closers.push(() => otel.shutdown());
  const webhooks = createWebhooks({ auth: false, telemetry: otel.telemetry, logLevel: 'silent' });
  closers.push(() => webhooks.close().then(() => undefined));
  for (const traceparent of [VALID, `${VALID}-junk`]) {
    const response = await webhooks.handle(buildRequest(createTestEvent('message_sent'), { headers: { traceparent } }));
    expect(response.status).toBe(200);
  }
  await waitFor(() => otel.spans().filter((span) => span.kind === SpanKind.SERVER).length === 2);
  const [child, own] = otel.spans().filter((span) => span.kind === SpanKind.SERVER);
  expect(child?.spanContext().traceId).toBe(TRACE_ID);
  expect(child?.parentSpanContext?.spanId).toBe(PARENT_ID);
  expect(own?.spanContext().traceId).not.toBe(TRACE_ID);
  expect(own?.parentSpanContext).toBeUndefined();
});
