/**
 * The agent's output on its way to the owner's terminal (issue 24): what a
 * full-screen agent needs to draw passes byte for byte, and nothing that
 * reaches past its own screen does. An agent is untrusted; the owner's
 * terminal holds the clipboard, the window title, and an input channel into
 * whatever runs in it after the agent: a report request answered just as the
 * agent exits is typed into the owner's shell.
 *
 * Passes (an allow-list; everything else is dropped whole):
 * - text: valid UTF-8, printable; an invalid byte becomes U+FFFD, as the
 *   terminal would show it, so no C1 control can be assembled from it;
 * - C0: BEL, BS, HT, LF, VT, FF, CR, SO, SI;
 * - ESC: 7 8 (save, restore cursor), = > (keypad), D E H M (index, next line,
 *   tab set, reverse index), c (reset), charset designations `( ) * + - . /`,
 *   `# 3`-`# 8` (line size, alignment test);
 * - CSI without a marker: cursor moves and positions (A-G, H, I, Z, `, a, d,
 *   e, f), erase and edit (J, K, X, @, P, L, M, S, T with one parameter, b),
 *   tab clear (g), SGR (m), scroll region (r), save and restore cursor (s,
 *   u), cursor style (SP q), soft reset (! p), insert mode (4 h/l);
 * - CSI ?: selective erase (J, K), save and restore modes (s, r), and the
 *   DEC modes a TUI sets (h/l of 1, 5, 6, 7, 9, 12, 25, 45, 47, 66,
 *   1000, 1002-1007, 1015, 1016, 1047-1049, 2004, 2026, 2027; others in the
 *   same sequence are removed from it);
 * - keyboard protocols: CSI > m and CSI > n (xterm modifyOtherKeys), CSI > u,
 *   CSI < u and CSI = u (kitty keyboard flags);
 * - OSC 8 hyperlinks to http(s) URIs (and the OSC 8 that ends a link);
 *   OSC 0, 1, 2 (titles) only with `allowTitle`.
 *
 * Dropped, among the rest: every report or query request (DSR `n`, DA `c`,
 * DECRQM `$ p`, DECRQSS and every DCS, XTVERSION `> q`, window ops and their
 * reports `t`, kitty `? u`, OSC colour queries and sets), OSC 52 (clipboard),
 * OSC 7, 9, 777, 1337 and every other OSC, APC, PM, SOS, every 8-bit C1
 * control and what it opens, ESC % (leaving UTF-8), ESC SP F/G (8-bit
 * replies), ENQ (answerback), and modes that lock the keyboard (KAM), echo
 * locally (SRM), resize (DECCOLM) or make the terminal report on its own.
 *
 * Two dropped requests are answered to the agent instead, with fixed text
 * that says nothing of the owner's terminal: DA1 (a VT100) and DSR 5 (ok).
 * Programs send DA1 after queries they are unsure of and wait for its answer
 * (fish, neovim); without one they would stall until their own timeout.
 *
 * A sequence split across writes, even byte by byte, is held until it is
 * complete (the parser's caps bound what is held); the output is the same
 * however the input is cut.
 */
import { TerminalParser, isPrintable } from './parser.js';
/** BEL, BS, HT, LF, VT, FF, CR, SO, SI. */
export const keepControl = (cp) => cp === 0x07 || (cp >= 0x08 && cp <= 0x0f);
/** CSI finals with no marker and no intermediate that only draw. */
const DRAWING = new Set('@ABCDEFGHIJKLMPSXZ`abdefgmrsu');
/** DEC private modes a full-screen program sets: cursor, screens, mouse, focus, paste, sync. */
const DEC_MODES = new Set([
    1, 5, 6, 7, 9, 12, 25, 45, 47, 66, 1000, 1002, 1003, 1004, 1005, 1006, 1007, 1015, 1016, 1047,
    1048, 1049, 2004, 2026, 2027,
]);
/**
 * The modes of DEC_MODES that make a terminal type into its input by itself:
 * mouse reports (every tracking mode and encoding), focus reports and paste
 * brackets, all reset. An agent needs them while it runs; left set once it is
 * gone, each click, focus change or paste in the owner's shell would type a
 * report there. Alternate scroll (1007) stays: some terminals have it on by
 * default, and it only acts on the alternate screen.
 */
export const REPORTS_OFF = '\x1b[?9;1000;1002;1003;1004;1005;1006;1015;1016;2004l';
/**
 * The owner's terminal put back before `run` prints its last lines (issue 35):
 * an agent can leave set every mode the filter passes, and one that ends with
 * a scroll region of two lines, the DEC graphics charset or concealed text
 * hides the lines that tell the owner what was held. In order: the alternate
 * screen left (by 1047 and 47, not 1049, whose reset also moves the cursor
 * to where a 1049 set long before saved it, even off the alternate screen),
 * the reporting modes off, then each mode a soft reset (DECSTR) covers,
 * undone on its own: the whole screen as the scroll region, G0 and G1 ASCII
 * and G0 shifted in, attributes, origin and insert mode off, autowrap on,
 * cursor keys and keypad normal, the cursor shown in its default style; and
 * synchronized output and reverse video off, xterm's modifyOtherKeys off, the
 * kitty keyboard flags zeroed and their stack popped empty. Not DECSTR
 * itself: tmux takes it as a full reset and clears the screen, and the
 * owner would lose the agent's last screen. Resetting the scroll region and
 * origin mode moves the cursor home, and the lines after would overwrite
 * the top of the screen: the cursor is saved before and put back after them
 * (DECRC may set origin mode again, which with the whole screen as the
 * region positions as it would off).
 */
export const TERMINAL_RESTORE = '\x1b[?1047l\x1b[?47l' +
    REPORTS_OFF +
    '\x1b7\x1b[?6l\x1b[r\x1b8' +
    '\x1b(B\x1b)B\x0f\x1b[0m\x1b[4l\x1b[?7h\x1b[?1l\x1b>\x1b[?25h\x1b[0 q' +
    '\x1b[?2026l\x1b[?5l\x1b[>4;0m\x1b[=0;1u\x1b[<999u';
/** ANSI modes: insert only (KAM locks the keyboard, SRM echoes what the owner types). */
const ANSI_MODES = new Set([4]);
/** `raw` of a mode set or reset, with only the allowed modes; null when none is left. */
function modes(seq, marker, body, allowed) {
    const list = body.split(';');
    const kept = list.filter((p) => /^[0-9]+$/.test(p) && allowed.has(Number(p)));
    if (kept.length === 0)
        return null;
    if (kept.length === list.length)
        return seq.raw;
    return `\x1b[${marker}${kept.join(';')}${seq.final}`;
}
function csi(seq) {
    const marker = /^[<=>?]/.test(seq.params) ? seq.params.charAt(0) : '';
    const body = seq.params.slice(marker.length);
    if (!/^[0-9;:]*$/.test(body))
        return null;
    const key = marker + seq.intermediates + seq.final;
    if (marker === '' && seq.intermediates === '' && DRAWING.has(seq.final))
        return seq.raw;
    switch (key) {
        // Scroll down; with five parameters it starts highlight mouse tracking, which reports.
        case 'T':
            return body.includes(';') ? null : seq.raw;
        case 'h':
        case 'l':
            return modes(seq, '', body, ANSI_MODES);
        case '?h':
        case '?l':
            return modes(seq, '?', body, DEC_MODES);
        case '?J':
        case '?K':
        case '?s':
        case '?r':
        case '>m':
        case '>n':
        case '>u':
        case '<u':
        case '=u':
        case ' q':
        case '!p':
            return seq.raw;
        default:
            return null;
    }
}
function esc(seq) {
    const i = seq.intermediates;
    if (i === '')
        return '78=>DEHMc'.includes(seq.final) ? seq.raw : null;
    if (i.length === 1 && '()*+-./'.includes(i))
        return seq.raw;
    if (i === '#' && seq.final >= '3' && seq.final <= '8')
        return seq.raw;
    return null;
}
/** A hyperlink's URI: printable ASCII, http or https; empty ends a link. */
const LINK = /^8;[\x20-\x3a\x3c-\x7e]*;(https?:\/\/[\x21-\x7e]+)?$/i;
const TITLE = /^[012];/;
function osc(seq, o) {
    if (seq.end !== 'bel' && seq.end !== 'st')
        return null;
    if (LINK.test(seq.body))
        return seq.raw;
    if (o.allowTitle === true && TITLE.test(seq.body))
        return seq.raw;
    return null;
}
/** What of `seq` goes to the owner's terminal: its text, possibly narrowed, or null to drop it. */
export function outputSequence(seq, o = {}) {
    // Never an 8-bit form: a terminal that reads C1 controls would act on it, others would show junk.
    if (seq.c1)
        return null;
    if (seq.type === 'csi')
        return csi(seq);
    if (seq.type === 'esc')
        return esc(seq);
    return osc(seq, o);
}
/** The fixed answers to DA1 and DSR 5: a VT100 with advanced video, and "ready". */
export const AGENT_ANSWERS = {
    c: '\x1b[?1;2c',
    '0c': '\x1b[?1;2c',
    '5n': '\x1b[0n',
};
/** The answer `run` gives the agent for `seq`, a request it kept from the terminal, if any. */
export function agentAnswer(seq) {
    if (seq.type !== 'csi' || seq.c1 || seq.intermediates !== '')
        return null;
    return AGENT_ANSWERS[seq.params + seq.final] ?? null;
}
const encoder = new TextEncoder();
const REPLACEMENT = encoder.encode('\ufffd');
/**
 * The streaming filter: `write` each chunk of the agent's output and send on
 * what it returns; `end` when the output ends. Memory is bounded whatever the
 * input: at most one unfinished UTF-8 character and one sequence under its cap.
 */
export class TerminalOutputFilter {
    options;
    parser;
    out = [];
    // The UTF-8 decoder (WHATWG's): the character being read and the bytes it still needs.
    cp = 0;
    needed = 0;
    seen = 0;
    lower = 0x80;
    upper = 0xbf;
    /** Bytes of the character being read, for when it is complete (it may span writes). */
    held = [];
    /** `answer` receives what to type into the agent's terminal in place of the owner's terminal's answer. */
    constructor(options = {}, answer) {
        this.options = options;
        this.parser = new TerminalParser({
            print: (cp) => this.out.push(cp === 0xfffd ? REPLACEMENT : encoder.encode(String.fromCodePoint(cp))),
            execute: (cp) => {
                if (keepControl(cp))
                    this.out.push(Uint8Array.of(cp));
            },
            dispatch: (seq) => {
                const text = outputSequence(seq, this.options);
                if (text !== null)
                    this.out.push(encoder.encode(text));
                else if (answer !== undefined) {
                    const reply = agentAnswer(seq);
                    if (reply !== null)
                        answer(reply);
                }
            },
        });
    }
    /** The bytes of `chunk` that may reach the terminal, with whatever earlier chunks left complete. */
    write(chunk) {
        // Printable text in ground state goes out as slices of the input: [runStart, runEnd).
        let runStart = -1;
        let runEnd = -1;
        const flushRun = () => {
            if (runStart >= 0)
                this.out.push(chunk.subarray(runStart, runEnd));
            runStart = -1;
        };
        for (let i = 0; i < chunk.length; i++) {
            const b = chunk[i] ?? 0;
            if (this.needed === 0) {
                if (b < 0x80) {
                    if (b >= 0x20 && b !== 0x7f && this.parser.ground) {
                        if (runStart < 0)
                            runStart = i;
                        runEnd = i + 1;
                        continue;
                    }
                    flushRun();
                    this.parser.feed(b);
                    continue;
                }
                if (b >= 0xc2 && b <= 0xdf)
                    this.begin(b, 1, b & 0x1f);
                else if (b >= 0xe0 && b <= 0xef) {
                    if (b === 0xe0)
                        this.lower = 0xa0;
                    if (b === 0xed)
                        this.upper = 0x9f;
                    this.begin(b, 2, b & 0x0f);
                }
                else if (b >= 0xf0 && b <= 0xf4) {
                    if (b === 0xf0)
                        this.lower = 0x90;
                    if (b === 0xf4)
                        this.upper = 0x8f;
                    this.begin(b, 3, b & 0x07);
                }
                else {
                    flushRun();
                    this.parser.feed(0xfffd);
                }
                continue;
            }
            if (b < this.lower || b > this.upper) {
                // A character cut short: it becomes U+FFFD and this byte is read afresh.
                flushRun();
                this.needed = 0;
                this.held = [];
                this.lower = 0x80;
                this.upper = 0xbf;
                this.parser.feed(0xfffd);
                i--;
                continue;
            }
            this.lower = 0x80;
            this.upper = 0xbf;
            this.cp = (this.cp << 6) | (b & 0x3f);
            this.held.push(b);
            if (++this.seen < this.needed)
                continue;
            const cp = this.cp;
            const start = i + 1 - this.held.length;
            this.needed = 0;
            this.held = [];
            if (start >= 0 && isPrintable(cp) && this.parser.ground) {
                if (runStart < 0)
                    runStart = start;
                runEnd = i + 1;
                continue;
            }
            flushRun();
            this.parser.feed(cp);
        }
        flushRun();
        return this.take();
    }
    /** The end of the output: a character cut short becomes U+FFFD, an open sequence is dropped. */
    end() {
        if (this.needed > 0) {
            this.needed = 0;
            this.held = [];
            this.lower = 0x80;
            this.upper = 0xbf;
            this.parser.feed(0xfffd);
        }
        this.parser.reset();
        return this.take();
    }
    begin(b, needed, bits) {
        this.needed = needed;
        this.seen = 0;
        this.cp = bits;
        this.held = [b];
    }
    take() {
        const parts = this.out;
        this.out = [];
        if (parts.length === 1 && parts[0] !== undefined)
            return parts[0];
        let size = 0;
        for (const p of parts)
            size += p.length;
        const all = new Uint8Array(size);
        let at = 0;
        for (const p of parts) {
            all.set(p, at);
            at += p.length;
        }
        return all;
    }
}
