/**
 * Request caveats (issue 40): the methods and paths a proxy request may have
 * for the host to fill an entry's value into it, set by the owner per agent
 * and entry (`vault-cli agent caveats`). Pure: the host parses the owner's
 * rules and judges each fill's request with them (access.ts).
 *
 * A rule is `<METHOD> <pattern>`: METHOD is an upper-case HTTP method, or `*`
 * for any. The pattern is an absolute path split on `/`:
 * - a literal segment matches that segment exactly (case-sensitive), after
 *   the request's segment is percent-decoded;
 * - `*` matches exactly one non-empty segment;
 * - `**` matches any number of segments, none included (`/a/**` matches
 *   `/a`, `/a/b` and `/a/b/c`);
 * - `/` alone matches the root.
 * A pattern holds no `%`, `?`, `#`, `;`, `\`, control character, empty
 * segment, dot segment, or `*` inside a literal segment (`a*b`): nothing that
 * two readers of it could take differently.
 *
 * A request's path is normalised before it is matched: the query is ignored
 * (caveats are about the resource; an API that overrides its method from
 * the query is outside what they describe, docs/proxy.md), each segment is
 * percent-decoded once, and `.` and `..` segments (as written or encoded)
 * are resolved. A path no server could read one way only never matches any
 * rule: a malformed percent-escape, a decoded `/`, `\`, `%`, `;` or control
 * character, an empty segment (servers that merge slashes and servers that
 * do not resolve `..` after it differently), a `..` above the root, or a
 * target that is not an absolute path.
 */
/** An HTTP method as a rule names one (RFC 9110 methods are case-sensitive). */
const METHOD = /^[A-Z]{1,20}$/;
/** What a literal pattern segment may hold: RFC 3986 pchar, less `%`, `;` and `*`. */
const LITERAL = /^[A-Za-z0-9\-._~!$&'()+,=:@]+$/;
/** Longest rule, and most rules per agent and entry. */
export const MAX_RULE_LENGTH = 512;
export const MAX_RULES = 32;
/** A rule as the owner wrote it, parsed; or why it is not one. */
export function parseCaveat(rule) {
    if (rule.length > MAX_RULE_LENGTH)
        return { problem: 'longer than 512 characters' };
    const m = /^([^ ]+) +([^ ]+)$/.exec(rule.trim());
    if (m === null)
        return { problem: 'not `<METHOD> <path pattern>`' };
    const method = m[1];
    const pattern = m[2];
    if (method !== '*' && !METHOD.test(method))
        return { problem: 'the method is not an upper-case HTTP method or *' };
    if (!pattern.startsWith('/'))
        return { problem: 'the path pattern does not start with /' };
    if (pattern === '/')
        return { method, segments: [] };
    const segments = pattern.slice(1).split('/');
    for (const s of segments) {
        if (s === '')
            return { problem: 'the path pattern has an empty segment' };
        if (s === '.' || s === '..')
            return { problem: 'the path pattern has a dot segment' };
        if (s !== '*' && s !== '**' && !LITERAL.test(s))
            return { problem: `the segment ${JSON.stringify(s)} is neither a literal, * nor **` };
    }
    return { method, segments };
}
/** A rule in its one written form (`GET /repos/acme/**`). */
export function showCaveat(c) {
    return `${c.method} /${c.segments.join('/')}`;
}
/** Percent-decodes one segment, or null when it is malformed or decodes to what never matches. */
function decodeSegment(s) {
    let out;
    try {
        out = decodeURIComponent(s);
    }
    catch {
        return null;
    }
    return /[/\\%;\x00-\x1f\x7f]/.test(out) ? null : out;
}
/**
 * A request target's path as caveats read it: its decoded segments with dot
 * segments resolved, or null when it never matches (see the file's comment).
 */
export function normalisePath(target) {
    const q = target.search(/[?#]/);
    const path = q === -1 ? target : target.slice(0, q);
    if (!path.startsWith('/'))
        return null;
    if (path === '/')
        return [];
    const raw = path.slice(1).split('/');
    const out = [];
    for (let i = 0; i < raw.length; i++) {
        const seg = decodeSegment(raw[i]);
        if (seg === null)
            return null;
        // A trailing slash names the same resource as none; an empty segment anywhere else never matches.
        if (seg === '') {
            if (i === raw.length - 1)
                break;
            return null;
        }
        if (seg === '.')
            continue;
        if (seg === '..') {
            if (out.length === 0)
                return null;
            out.pop();
            continue;
        }
        out.push(seg);
    }
    return out;
}
/**
 * Whether `pattern` matches the whole of `path`: a table over pattern
 * positions, one pass per path segment, so a pattern of many `**` costs
 * pattern length x path length and never backtracks.
 */
function matchAll(pattern, path) {
    // at[p]: the pattern's first p segments match the path read so far.
    let at = new Array(pattern.length + 1).fill(false);
    at[0] = true;
    const closeOver = (row) => {
        // A ** may match no segment: reaching it is reaching past it.
        for (let p = 0; p < pattern.length; p++)
            if (row[p] && pattern[p] === '**')
                row[p + 1] = true;
    };
    closeOver(at);
    for (const seg of path) {
        const next = new Array(pattern.length + 1).fill(false);
        for (let p = 0; p < pattern.length; p++) {
            if (!at[p])
                continue;
            const s = pattern[p];
            if (s === '**')
                next[p] = true;
            else if (s === '*' || s === seg)
                next[p + 1] = true;
        }
        closeOver(next);
        at = next;
    }
    return at[pattern.length] === true;
}
/** Whether a request (method as sent, normalised path) is allowed by one rule. */
export function matchesCaveat(c, method, path) {
    if (c.method !== '*' && c.method !== method)
        return false;
    return matchAll(c.segments, path);
}
/**
 * Whether a request is allowed by any of `rules` (the stored, already
 * parsed-and-shown forms). A rule that no longer parses allows nothing.
 */
export function requestAllowed(rules, method, target) {
    const path = normalisePath(target);
    if (path === null)
        return false;
    for (const r of rules) {
        const c = parseCaveat(r);
        if (!('problem' in c) && matchesCaveat(c, method, path))
            return true;
    }
    return false;
}
/**
 * Whether replacing rules `before` (null: none, every request allowed) with
 * `after` (null: none) only narrows what is allowed. Judged by the rules as
 * written: every rule kept was there before, and some rule stays. A narrower
 * rule that is not one of the old ones counts as loosening (the owner proves
 * it with the passphrase), which errs on the side of asking.
 */
export function onlyNarrows(before, after) {
    if (after === null)
        return before === null;
    if (after.length === 0)
        return false;
    if (before === null)
        return true;
    return after.every((r) => before.includes(r));
}
