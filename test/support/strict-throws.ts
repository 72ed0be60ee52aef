/**
 * chai, under vitest's `toThrow`, compares the message only of a thrown value that is truthy: so
 * `await expect(promise).rejects.toThrow('…')` passed for a promise rejected with `undefined`, and a test of an
 * error's message could not fail when the error was lost (mutation testing of src/stores/redis/index.ts found two).
 * Loaded for every test file (vitest.config.ts `setupFiles`): such a rejection now fails the assertion.
 */
import { chai } from 'vitest';

chai.use((api, utils) => {
  for (const name of ['throw', 'throws', 'Throw']) {
    utils.overwriteMethod(api.Assertion.prototype, name, (original: (...args: unknown[]) => unknown) => {
      return function strictThrows(this: object, ...args: unknown[]) {
        const [expected] = args;
        const matchesMessage = typeof expected === 'string' || expected instanceof RegExp;
        const value: unknown = utils.flag(this, 'object');
        if (utils.flag(this, 'promise') === 'rejects' && matchesMessage && !utils.flag(this, 'negate') && value == null) {
          throw new api.AssertionError(`expected a rejection whose message matches ${String(expected)}, but it rejected with ${String(value)}`);
        }
        return original.apply(this, args);
      };
    });
  }
});
