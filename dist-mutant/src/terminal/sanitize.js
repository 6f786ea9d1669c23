/**
 * Agent output made safe to show inside the dashboard (docs/dashboard.md, issue 7):
 * the glimpse of the agent's screen.
 *
 * An agent writes whatever bytes it likes; shown verbatim inside the dashboard
 * they could move the cursor over the dashboard's own lines, clear it, retitle
 * the window, or write the owner's clipboard (OSC 52). So the glimpse's policy
 * is stricter than the filter on the agent's own screen (terminal-filter.ts),
 * over the same parser (terminal-parser.ts): every terminal control is
 * removed, not escaped: escape, CSI and OSC sequences, DCS/SOS/PM/APC
 * strings, C1 controls in their 8-bit form (U+0080-U+009F) with what they
 * open, and C0 controls other than newline and tab. Printable text, non-ASCII
 * included, passes unchanged.
 *
 * The output holds no ESC, C0 (but \n, \t) or C1 character at all, so no
 * sequence can be assembled from what is left: sanitising twice is sanitising
 * once. A sequence left open at the end of the text swallows the rest of it,
 * as a terminal would.
 */
import { TerminalParser } from './parser.js';
/**
 * `s` with every terminal control sequence and control character removed but
 * newline and tab. Pure and total: never throws, whatever the input.
 */
export function sanitizeTerminalText(s) {
    let out = '';
    const parser = new TerminalParser({
        print: (cp) => (out += String.fromCodePoint(cp)),
        execute: (cp) => {
            if (cp === 0x0a || cp === 0x09)
                out += String.fromCharCode(cp);
        },
        dispatch: () => { },
    });
    for (const ch of s)
        parser.feed(ch.codePointAt(0) ?? 0);
    return out;
}
