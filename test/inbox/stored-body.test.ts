/** The durable stores' reading of a stored raw body (src/delivery/stored-event.ts), on its own. */
import { describe, expect, it } from 'vitest';
import { eventOfBody, isStorableBody, unstorableBody } from '../../src/delivery/stored-event.js';

describe('stored raw bodies', () => {
  it('a body is storable when it starts with `{`, after a byte order mark and blanks', () => {
    for (const body of ['{}', '{"trigger":"x"}', ' \n\t{}', '\ufeff{}', '\ufeff \r\n{}']) expect(isStorableBody(body)).toBe(true);
    for (const body of ['', '[object Object]', '[{}]', 'x{}', '"{"', 'null', '} {']) expect(isStorableBody(body)).toBe(false);
  });

  it('names the store in the error for a body it cannot store', () => {
    const error = unstorableBody('Redis');
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('The Redis inbox stores an event as its raw body, and this one has no JSON text.');
  });

  it('parses the body back, skipping a leading byte order mark only', () => {
    expect(eventOfBody('{"trigger":"message_sent","data":{"n":1}}')).toEqual({ trigger: 'message_sent', data: { n: 1 } });
    expect(eventOfBody('\ufeff{"trigger":"message_sent"}')).toEqual({ trigger: 'message_sent' });
    expect(eventOfBody('{"text":"\ufeff"}')).toEqual({ text: '\ufeff' });
    expect(() => eventOfBody('\ufeff\ufeff{}')).toThrow(SyntaxError);
  });
});
