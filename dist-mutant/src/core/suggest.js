/**
 * "Did you mean": the nearest of a few known words to one that matched none
 * (a command, an agent's name). Pure; only ever given names the asker may
 * already see (the command table, the owner's own agents).
 */
/** Common words for the ones vault-cli spells otherwise. */
const ALIASES = {
    list: 'ls',
    remove: 'rm',
    delete: 'rm',
    del: 'rm',
    new: 'add',
    create: 'add',
    get: 'show',
};
/** Optimal string alignment distance (edits, adjacent swaps included), case-folded. */
export function distance(a, b) {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    const d = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
    for (let i = 1; i <= x.length; i++) {
        for (let j = 1; j <= y.length; j++) {
            const cost = x[i - 1] === y[j - 1] ? 0 : 1;
            const row = d[i];
            const up = d[i - 1];
            let v = Math.min(up[j] + 1, row[j - 1] + 1, up[j - 1] + cost);
            if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
                v = Math.min(v, d[i - 2][j - 2] + 1);
            }
            row[j] = v;
        }
    }
    return d[x.length][y.length];
}
/**
 * The candidate nearest to `word`, if near enough to be a slip (at most a
 * third of its length in edits, at least one; or a known alias, or a prefix
 * of three letters or more), else null. Ties go to the first candidate.
 */
export function closest(word, candidates) {
    if (word === '' || word.length > 64)
        return null;
    const alias = ALIASES[word.toLowerCase()];
    if (alias !== undefined && candidates.includes(alias))
        return alias;
    let best = null;
    let bestD = Infinity;
    for (const c of candidates) {
        if (c === word || c.length > 64)
            continue;
        const dd = distance(word, c);
        if (dd < bestD) {
            best = c;
            bestD = dd;
        }
    }
    if (best === null)
        return null;
    const near = bestD <= Math.max(1, Math.floor(word.length / 3));
    const prefix = word.length >= 3 && best.toLowerCase().startsWith(word.toLowerCase());
    return near || prefix ? best : null;
}
/** ` (did you mean "x"?)`, or nothing. */
export function didYouMean(word, candidates) {
    const c = closest(word, candidates);
    return c === null ? '' : ` (did you mean ${JSON.stringify(c)}?)`;
}
