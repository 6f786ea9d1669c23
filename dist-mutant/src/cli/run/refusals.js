// The session proxy's refusals, told on `run`'s stderr without flooding it.
import { localTimes } from '../../core/audit.js';
/** At most one line a second per code: an agent in a retry loop does not flood the owner's terminal. */
const REFUSAL_EVERY_MS = 1_000;
/** Lines remembered as shown; past it the oldest is forgotten (and may be shown again). */
const SHOWN_MAX = 256;
/**
 * One line per refusal, at most one a second per code; those held back are
 * counted in the next line of their code, or when the session ends. A
 * refusal's message names the code, the destination and the reference as
 * written, never a value (src/proxy/refusal.ts). A line already shown is
 * not shown again: a client that retries a refused request (curl --retry,
 * an agent's HTTP client on a 429) hears the same refusal, and one
 * violation must read as one. What the vault has no part in (no reference,
 * no proxy token: the agent's own traffic) is only counted, in one line at
 * the end.
 */
export function refusalReport(write, now = Date.now) {
    const codes = new Map();
    const shown = new Set();
    const own = new Map();
    let holding = false;
    const more = (n) => (n === 0 ? '' : ` (${n} more before it)`);
    return {
        refused(err, vault = true) {
            if (!vault) {
                own.set(err.code, (own.get(err.code) ?? 0) + 1);
                return;
            }
            const c = codes.get(err.code) ?? { at: -Infinity, held: 0 };
            codes.set(err.code, c);
            // The retry time as `get` prints it: local, to the second (the reply carries UTC ISO).
            const said = err.line().replace(/^vault-cli: /, '');
            const line = `vault-cli: the proxy refused: ${err.code === 'VLT-2042' ? localTimes(said) : said}`;
            if (holding || shown.has(line) || now() - c.at < REFUSAL_EVERY_MS) {
                c.held++;
                return;
            }
            write(line + more(c.held));
            if (shown.size >= SHOWN_MAX)
                shown.delete(shown.values().next().value);
            shown.add(line);
            c.at = now();
            c.held = 0;
        },
        hold() {
            holding = true;
        },
        resume() {
            holding = false;
        },
        flush() {
            holding = false;
            for (const [code, c] of codes)
                if (c.held > 0) {
                    write(`vault-cli: the proxy refused ${c.held} more with ${code}`);
                    c.held = 0;
                }
            const n = [...own.values()].reduce((a, b) => a + b, 0);
            if (n > 0) {
                const by = [...own].map(([code, k]) => `${code} ${k}`).join(', ');
                write(`vault-cli: not shown: ${n} request${n === 1 ? '' : 's'} with no vault reference failed at the proxy (${by}): the agent's own traffic (docs/run.md)`);
                own.clear();
            }
        },
    };
}
