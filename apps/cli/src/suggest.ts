/** Levenshtein distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[y.length]!;
}

/**
 * The known words nearest to `word`: those within a third of its length (at least 2 edits),
 * closest first, at most three; a word that starts the same way counts as near.
 */
export function nearest(word: string, known: Iterable<string>): string[] {
  const limit = Math.max(2, Math.floor(word.length / 3));
  return [...known]
    .map((k) => ({ k, d: k.toLowerCase().startsWith(word.toLowerCase()) && word.length >= 3 ? 1 : editDistance(word, k) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .slice(0, 3)
    .map(({ k }) => k);
}

/** `; did you mean "x"?` or nothing. */
export function didYouMean(word: string, known: Iterable<string>): string {
  const near = nearest(word, known);
  return near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : '';
}
