/**
 * "Did you mean" for a misspelled option, trigger or command name, by edit distance: for the receiver's
 * errors and the command line's alike (a leaf that imports nothing, which both may import).
 */

/** Levenshtein distance. */
export function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The closest known names (up to three), closest first; none when nothing is near. */
export function closest(name: string, known: readonly string[]): string[] {
  const wanted = name.toLowerCase();
  const limit = Math.max(2, Math.floor(name.length / 3));
  return known
    .map((candidate) => ({ candidate, score: distance(wanted, candidate.toLowerCase()) }))
    .filter(({ candidate, score }) => score <= limit || (wanted.length > 2 && candidate.toLowerCase().includes(wanted)))
    .sort((a, b) => a.score - b.score)
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}

/** ` Did you mean "x"?` (with its leading space), or an empty string when nothing is near. */
export function didYouMean(name: string, known: readonly string[]): string {
  const near = closest(name, known);
  return near.length === 0 ? '' : ` Did you mean ${near.map((candidate) => `"${candidate}"`).join(' or ')}?`;
}
