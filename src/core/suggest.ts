/**
 * "Did you mean": the nearest of a few known words to one that matched none
 * (a command, an agent's name). Pure; only ever given names the asker may
 * already see (the command table, the owner's own agents).
 */

/** Common words for the ones vault-cli spells otherwise. */
const ALIASES: Readonly<Record<string, string>> = {
  list: 'ls',
  remove: 'rm',
  delete: 'rm',
  del: 'rm',
  new: 'add',
  create: 'add',
  get: 'show',
};

/** Optimal string alignment distance (edits, adjacent swaps included), case-folded. */
export function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) =>
    Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let v = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = v;
    }
  }
  return (d[x.length] as number[])[y.length] as number;
}

/**
 * The candidate nearest to `word`, if near enough to be a slip (at most a
 * third of its length in edits, at least one; or a known alias, or a prefix
 * of three letters or more), else null. Ties go to the first candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  if (word === '' || word.length > 64) return null;
  const alias = ALIASES[word.toLowerCase()];
  if (alias !== undefined && candidates.includes(alias)) return alias;
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    if (c === word || c.length > 64) continue;
    const dd = distance(word, c);
    if (dd < bestD) {
      best = c;
      bestD = dd;
    }
  }
  if (best === null) return null;
  const near = bestD <= Math.max(1, Math.floor(word.length / 3));
  const prefix = word.length >= 3 && best.toLowerCase().startsWith(word.toLowerCase());
  return near || prefix ? best : null;
}

/** ` (did you mean "x"?)`, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c === null ? '' : ` (did you mean ${JSON.stringify(c)}?)`;
}
