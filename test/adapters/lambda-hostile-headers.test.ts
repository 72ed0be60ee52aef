/** Header names that collide with Object.prototype's members arrive as ordinary data in Lambda's maps. */
import { describe, expect, it } from 'vitest';
import { lambdaHandler, type LambdaHttpEvent, type LambdaHttpResult } from '../../adapters/lambda/index.js';
import { albEvent, lambdaContext, restApiEvent } from './lambda-events.js';
import { AUTH, fixture, recordingReceiver } from './status-table.js';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

/** The event with the extra headers added as JSON would carry them: own properties, whatever their name. */
function withHeaders(event: LambdaHttpEvent, names: string[]): LambdaHttpEvent {
  const copy = JSON.parse(JSON.stringify(event)) as Record<string, Record<string, unknown> | undefined>;
  for (const name of names) {
    // defineProperty, not assignment: `map.__proto__ = …` would set the prototype instead.
    if (copy.multiValueHeaders) Object.defineProperty(copy.multiValueHeaders, name, { value: ['a', 'b'], enumerable: true });
    if (copy.headers) Object.defineProperty(copy.headers, name, { value: 'b', enumerable: true });
  }
  return copy as unknown as LambdaHttpEvent;
}

const events: Record<string, () => LambdaHttpEvent> = {
  'REST API (multiValueHeaders)': () =>
    restApiEvent({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') }),
  'ALB with multi-value headers': () =>
    albEvent({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') }, true),
  'ALB with single headers': () =>
    albEvent({ method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') }),
};

describe('lambda: header names such as constructor and __proto__', () => {
  for (const [kind, build] of Object.entries(events)) {
    it(`${kind}: a delivery carrying them is answered 200 and dispatched`, async () => {
      const { webhooks, events: received, errors } = recordingReceiver();
      const handler = lambdaHandler(webhooks);
      const event = withHeaders(build(), NAMES);
      const result = (await handler(event, lambdaContext())) as LambdaHttpResult;
      expect(result.statusCode).toBe(200);
      expect(received).toHaveLength(1);
      expect(errors).toEqual([]);
    });
  }
});
