/** test/support/strict-throws.ts, the setup file every test file loads: what `rejects.toThrow` now refuses. */
import { describe, expect, it } from 'vitest';

const failureOf = (assertion: Promise<unknown>) => assertion.then(() => 'passed', (error: unknown) => String(error));

describe('rejects.toThrow with a message or pattern', () => {
  it('fails for a promise rejected with undefined or null (chai let it pass)', async () => {
    expect(await failureOf(expect(Promise.reject(undefined)).rejects.toThrow('lost'))).toMatch(/expected a rejection whose message matches lost, but it rejected with undefined/);
    expect(await failureOf(expect(Promise.reject(null)).rejects.toThrow(/lost/))).toMatch(/matches \/lost\/, but it rejected with null/);
  });

  it('still passes for an error whose message matches, and fails for one whose message does not', async () => {
    expect(await failureOf(expect(Promise.reject(new Error('lost it'))).rejects.toThrow('lost'))).toBe('passed');
    expect(await failureOf(expect(Promise.reject(new Error('found'))).rejects.toThrow(/lost/))).toMatch(/AssertionError/);
    expect(await failureOf(expect(Promise.reject(undefined)).rejects.not.toThrow('lost'))).toBe('passed');
    expect(await failureOf(expect(Promise.reject(undefined)).rejects.toBeUndefined())).toBe('passed');
  });
});
