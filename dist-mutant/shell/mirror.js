/**
 * The agent's screen, mirrored in a headless terminal (docs/run.md): the
 * supervisor feeds it every byte the agent writes, from spawn on, whether the
 * user sees the agent or the dashboard at that moment. On return from the
 * dashboard `repaint()` gives the bytes that put the agent's screen back on a
 * real terminal, and the dashboard can show the agent's last lines, sanitised.
 *
 * The repaint depends only on the mirror, never on what the dashboard left
 * behind: it resets the modes a full-screen program might change, clears,
 * draws the normal screen (and the alternate screen on top when the agent is
 * in it), then restores the scroll region, the modes the agent set, the
 * cursor's cell and its visibility.
 */
// @xterm/headless and its serialize addon are CommonJS bundles without
// named-export hints: Node gives ESM importers their module.exports as default.
import xtermHeadless from '@xterm/headless';
import xtermSerialize from '@xterm/addon-serialize';
import { sanitizeTerminalText } from '../src/terminal/sanitize.js';
const { Terminal } = xtermHeadless;
const { SerializeAddon } = xtermSerialize;
const CSI = '\x1b[';
/**
 * The terminal modes a program may change, at their defaults: application
 * cursor and keypad, bracketed paste, insert, origin, reverse wrap, focus
 * reports, autowrap, mouse reporting, and the pen. Written before the
 * dashboard takes the terminal, so it gets plain keys and no mouse reports
 * whatever the agent had set, and before the repaint restores the agent's
 * own, in case the dashboard left one set. The mouse encoding (1006, 1015) is
 * left alone: no dashboard needs it changed, and resetting it would garble an
 * agent's mouse reports.
 */
export const DEFAULT_MODES = `${CSI}?1l\x1b>${CSI}?2004l${CSI}4l${CSI}?6l${CSI}?45l${CSI}?1004l${CSI}?7h` +
    `${CSI}?9l${CSI}?1000l${CSI}?1002l${CSI}?1003l${CSI}0m`;
/** The modes the agent set that differ from the defaults, as xterm's serialize addon writes them. */
function agentModes(term) {
    const m = term.modes;
    let out = '';
    if (m.applicationCursorKeysMode)
        out += `${CSI}?1h`;
    if (m.applicationKeypadMode)
        out += `${CSI}?66h`;
    if (m.bracketedPasteMode)
        out += `${CSI}?2004h`;
    if (m.insertMode)
        out += `${CSI}4h`;
    if (m.reverseWraparoundMode)
        out += `${CSI}?45h`;
    if (m.sendFocusMode)
        out += `${CSI}?1004h`;
    if (!m.wraparoundMode)
        out += `${CSI}?7l`;
    const mouse = { none: '', x10: '?9h', vt200: '?1000h', drag: '?1002h', any: '?1003h' };
    if (m.mouseTrackingMode !== 'none')
        out += CSI + mouse[m.mouseTrackingMode];
    return out;
}
/**
 * State xterm keeps but does not publish: the active buffer's scroll region
 * and the cursor's visibility. Read defensively: an xterm upgrade that moves
 * them costs the restore of these two (the mirror tests catch it), not a crash.
 */
function hidden(term) {
    const core = term._core;
    const buffer = core?.buffer;
    const service = core?.coreService;
    const top = typeof buffer?.scrollTop === 'number' ? buffer.scrollTop : 0;
    const bottom = typeof buffer?.scrollBottom === 'number' ? buffer.scrollBottom : term.rows - 1;
    return { top, bottom, cursorHidden: service?.isCursorHidden === true };
}
export class ScreenMirror {
    term;
    serializer = new SerializeAddon();
    /** A blank screen of `cols` x `rows` keeping `scrollback` lines above it. */
    constructor(cols, rows, scrollback = 1000) {
        this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
        // The addon is typed against @xterm/xterm, the browser build, which is not installed.
        this.term.loadAddon(this.serializer);
    }
    /** Feeds what the agent wrote. Parsed asynchronously, in order; see `repaint`. */
    write(data) {
        this.term.write(typeof data === 'string' ? data : new Uint8Array(data));
    }
    /** Takes effect after the output written before it is parsed, as on the user's terminal. */
    resize(cols, rows) {
        if (cols <= 0 || rows <= 0)
            return;
        this.term.write('', () => {
            if (cols !== this.term.cols || rows !== this.term.rows)
                this.term.resize(cols, rows);
        });
    }
    /**
     * The bytes that restore the agent's screen on a real terminal of the
     * mirror's size. Resolves once everything written before the call is
     * parsed, and reflects exactly that: output written after the call is not
     * in it, so a caller that holds later output back and writes it after the
     * repaint loses nothing and repeats nothing.
     */
    repaint() {
        return new Promise((resolve) => {
            // Write callbacks run in order, once all earlier data is parsed.
            this.term.write('', () => resolve(this.picture()));
        });
    }
    /** Resolves once everything written before the call is parsed. */
    settled() {
        return new Promise((resolve) => this.term.write('', resolve));
    }
    picture() {
        const term = this.term;
        const { top, bottom, cursorHidden } = hidden(term);
        const active = term.buffer.active;
        const fullRegion = top === 0 && bottom === term.rows - 1;
        return (
        // Leave any alternate screen (the dashboard's, or a stale one), clear
        // attributes, scroll region and modes, then clear the screen.
        `${CSI}?1049l${CSI}r${DEFAULT_MODES}${CSI}H${CSI}2J` +
            // The visible normal screen, then the alternate screen over it when the
            // agent is in one, with the pen as the agent left it.
            this.serializer.serialize({ scrollback: 0, excludeModes: true }) +
            (fullRegion ? '' : `${CSI}${top + 1};${bottom + 1}r`) +
            agentModes(term) +
            // Setting the region and origin mode home the cursor, and the serializer's
            // relative moves can miss after a reflow: put the cursor on its cell.
            (term.modes.originMode
                ? `${CSI}?6h${CSI}${active.cursorY - top + 1};${active.cursorX + 1}H`
                : `${CSI}${active.cursorY + 1};${active.cursorX + 1}H`) +
            (cursorHidden ? `${CSI}?25l` : `${CSI}?25h`));
    }
    /**
     * The last `n` non-empty lines of the screen the agent is on (the
     * alternate screen when it uses one), as plain text with every control
     * removed; wrapped lines are joined. Reflects the output parsed so far.
     */
    lastLines(n) {
        const buffer = this.term.buffer.active;
        const lines = [];
        let y = buffer.length - 1;
        while (y >= 0 && lines.length < n) {
            let text = '';
            // Gather one logical line: rows that are continuations of the one above.
            let start = y;
            while (start > 0 && buffer.getLine(start)?.isWrapped === true)
                start--;
            for (let r = start; r <= y; r++)
                text += buffer.getLine(r)?.translateToString(r === y) ?? '';
            const clean = sanitizeTerminalText(text).trimEnd();
            if (clean.trim() !== '')
                lines.unshift(clean);
            y = start - 1;
        }
        return lines;
    }
    dispose() {
        this.term.dispose();
    }
}
