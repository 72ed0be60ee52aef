import { ConfigurationError } from './errors.js';
import { didYouMean } from '../text/suggest.js';

/**
 * Throws a `ConfigurationError` for a key of `options` that `known` does not list, naming the closest known
 * one and all of them: a misspelled option would otherwise be ignored without a word.
 */
export function rejectUnknownOptions(where: string, options: object | null | undefined, known: readonly string[]): void {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    throw new ConfigurationError(key, `Unknown option "${key}" for ${where}.${didYouMean(key, known)} Known options: ${known.join(', ')}.`);
  }
}
