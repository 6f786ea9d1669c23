/**
 * A streaming parser of terminal output (the DEC VT500 state machine that
 * xterm, VTE and xterm.js follow), shared by everything that decides what an
 * agent's output may do to a terminal: the filter on the way to the owner's
 * terminal (terminal-filter.ts) and the dashboard's glimpse (sanitize.ts).
 * Each gives its own policy; the parser only says what the text is.
 *
 * It is fed code points one at a time, in any number of calls, and holds at
 * most one unfinished sequence of bounded length: a sequence longer than its
 * cap, malformed, cancelled (CAN, SUB) or cut by another escape is never
 * dispatched, and nothing of it is kept. Every sequence it dispatches is
 * complete, so a caller that passes on only dispatched sequences and printed
 * text leaves the terminal behind it in its ground state.
 *
 * As in a terminal, C0 controls inside an escape or CSI sequence are executed
 * where they stand and the sequence goes on; U+0080-U+009F are the 8-bit C1
 * controls (a terminal decoding UTF-8 reads them so), opening or ending
 * sequences from any state.
 */
/** Longest CSI parameter and intermediate text kept (code points); longer is dropped. */
export const CSI_CAP = 512;
/** Longest OSC text kept (code points); a longer OSC is dropped whole. */
export const OSC_CAP = 4096;
/** Most intermediates an ESC sequence may have. */
const ESC_CAP = 4;
const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const DEL = 0x7f;
const C1_ST = 0x9c;
var State;
(function (State) {
    State[State["Ground"] = 0] = "Ground";
    State[State["Escape"] = 1] = "Escape";
    State[State["EscapeIgnore"] = 2] = "EscapeIgnore";
    State[State["Csi"] = 3] = "Csi";
    State[State["CsiIgnore"] = 4] = "CsiIgnore";
    /** OSC text being kept. */
    State[State["Osc"] = 5] = "Osc";
    /** A string being skipped to its end: DCS, SOS, PM, APC, or an OSC not kept. */
    State[State["StringIgnore"] = 6] = "StringIgnore";
    /** ESC seen inside a string: `\` ends it, anything else cuts it. */
    State[State["StringEsc"] = 7] = "StringEsc";
})(State || (State = {}));
/** Printable: neither C0, DEL nor C1. */
export const isPrintable = (cp) => cp >= 0x20 && cp !== DEL && !isC1(cp);
export const isC1 = (cp) => cp >= 0x80 && cp <= 0x9f;
/** A C0 control that a terminal executes inside an escape or CSI sequence without leaving it. */
const executedInside = (cp) => cp < 0x20 && cp !== ESC && cp !== CAN && cp !== SUB;
const STRING_OPENERS = {
    0x50: 'dcs', // P
    0x58: 'sos', // X
    0x5e: 'pm', // ^
    0x5f: 'apc', // _
    0x90: 'dcs',
    0x98: 'sos',
    0x9e: 'pm',
    0x9f: 'apc',
};
export class TerminalParser {
    sink;
    state = State.Ground;
    type = 'osc';
    c1 = false;
    params = '';
    intermediates = '';
    body = '';
    /** Whether the string that StringEsc interrupted was an OSC being kept. */
    keeping = false;
    constructor(sink) {
        this.sink = sink;
    }
    /** True between sequences: a printable character fed now would only be printed. */
    get ground() {
        return this.state === State.Ground;
    }
    /** Drops any unfinished sequence, as at the end of the output. */
    reset() {
        this.state = State.Ground;
    }
    feed(cp) {
        switch (this.state) {
            case State.Ground:
                if (isPrintable(cp))
                    this.sink.print(cp);
                else if (cp === ESC)
                    this.open();
                else if (isC1(cp))
                    this.anywhere(cp);
                else
                    this.sink.execute(cp);
                return;
            case State.Escape:
                return this.escape(cp);
            case State.EscapeIgnore:
                if (this.interrupt(cp))
                    return;
                if (cp >= 0x30 && cp <= 0x7e)
                    this.state = State.Ground;
                return;
            case State.Csi:
                return this.csi(cp);
            case State.CsiIgnore:
                if (this.interrupt(cp))
                    return;
                if (cp >= 0x40 && cp <= 0x7e)
                    this.state = State.Ground;
                return;
            case State.Osc:
                return this.osc(cp);
            case State.StringIgnore:
                return this.skipString(cp);
            case State.StringEsc:
                return this.stringEsc(cp);
        }
    }
    /** An ESC: a new sequence begins, whatever was open is dropped. */
    open() {
        this.state = State.Escape;
        this.c1 = false;
        this.intermediates = '';
    }
    /**
     * What every state inside an escape or CSI sequence does with controls:
     * C0 executed in place, DEL ignored, CAN and SUB cancel, ESC restarts, a C1
     * control acts as from anywhere. True when `cp` was such a control.
     */
    interrupt(cp) {
        if (executedInside(cp))
            this.sink.execute(cp);
        else if (cp === CAN || cp === SUB)
            this.state = State.Ground;
        else if (cp === ESC)
            this.open();
        else if (isC1(cp))
            this.anywhere(cp);
        else
            return cp === DEL;
        return true;
    }
    /** The C1 controls from any state: introducers open, ST and the rest end what was open. */
    anywhere(cp) {
        this.c1 = true;
        this.intermediates = '';
        if (cp === 0x9b)
            this.startCsi();
        else if (cp === 0x9d)
            this.startString('osc');
        else if (STRING_OPENERS[cp] !== undefined)
            this.startString(STRING_OPENERS[cp]);
        else {
            this.state = State.Ground;
            if (cp !== C1_ST)
                this.sink.execute(cp);
        }
    }
    escape(cp) {
        if (this.interrupt(cp))
            return;
        if (cp >= 0x20 && cp <= 0x2f) {
            this.intermediates += String.fromCharCode(cp);
            if (this.intermediates.length > ESC_CAP)
                this.state = State.EscapeIgnore;
            return;
        }
        if (this.intermediates === '') {
            if (cp === 0x5b)
                return this.startCsi();
            if (cp === 0x5d)
                return this.startString('osc');
            if (STRING_OPENERS[cp] !== undefined && cp < 0x80)
                return this.startString(STRING_OPENERS[cp]);
        }
        if (cp >= 0x30 && cp <= 0x7e) {
            this.state = State.Ground;
            const final = String.fromCharCode(cp);
            this.sink.dispatch({
                type: 'esc',
                c1: false,
                params: '',
                intermediates: this.intermediates,
                final,
                body: '',
                end: null,
                raw: `\x1b${this.intermediates}${final}`,
            });
            return;
        }
        // Not an escape after all: the ESC and what it gathered go, the character is read afresh.
        this.state = State.Ground;
        this.feed(cp);
    }
    startCsi() {
        this.state = State.Csi;
        this.params = '';
        this.intermediates = '';
    }
    csi(cp) {
        if (this.interrupt(cp))
            return;
        if (cp >= 0x40 && cp <= 0x7e) {
            this.state = State.Ground;
            const final = String.fromCharCode(cp);
            this.sink.dispatch({
                type: 'csi',
                c1: this.c1,
                params: this.params,
                intermediates: this.intermediates,
                final,
                body: '',
                end: null,
                raw: `${this.c1 ? '\u009b' : '\x1b['}${this.params}${this.intermediates}${final}`,
            });
            return;
        }
        const malformed = cp > 0x7e ||
            // Parameters after an intermediate, or a private marker after the first character.
            (cp >= 0x30 && cp <= 0x3f && this.intermediates !== '') ||
            (cp >= 0x3c && cp <= 0x3f && this.params !== '');
        if (malformed || this.params.length + this.intermediates.length >= CSI_CAP) {
            this.state = State.CsiIgnore;
            return;
        }
        if (cp >= 0x30)
            this.params += String.fromCharCode(cp);
        else
            this.intermediates += String.fromCharCode(cp);
    }
    startString(type) {
        this.type = type;
        this.body = '';
        this.state = type === 'osc' ? State.Osc : State.StringIgnore;
    }
    osc(cp) {
        if (cp === BEL)
            return this.endOsc('bel');
        if (cp === C1_ST)
            return this.endOsc('c1st');
        if (cp === ESC) {
            this.keeping = true;
            this.state = State.StringEsc;
            return;
        }
        if (!isPrintable(cp) || this.body.length >= OSC_CAP) {
            // A control inside, or too long: the OSC is skipped to its end, never dispatched.
            this.state = State.StringIgnore;
            this.skipString(cp);
            return;
        }
        this.body += String.fromCodePoint(cp);
    }
    endOsc(end) {
        this.state = State.Ground;
        const terminator = end === 'bel' ? '\x07' : end === 'st' ? '\x1b\\' : '\u009c';
        this.sink.dispatch({
            type: 'osc',
            c1: this.c1,
            params: '',
            intermediates: '',
            final: '',
            body: this.body,
            end,
            raw: `${this.c1 ? '\u009d' : '\x1b]'}${this.body}${terminator}`,
        });
    }
    skipString(cp) {
        if (cp === ESC) {
            this.keeping = false;
            this.state = State.StringEsc;
        }
        else if (cp === CAN || cp === SUB || cp === C1_ST)
            this.state = State.Ground;
        else if (cp === BEL && this.type === 'osc')
            this.state = State.Ground;
        else if (isC1(cp))
            this.anywhere(cp);
    }
    stringEsc(cp) {
        if (cp === 0x5c) {
            if (this.keeping)
                return this.endOsc('st');
            this.state = State.Ground;
            return;
        }
        // ESC then anything but `\`: the string is cut, the ESC opens a sequence of its own.
        this.open();
        this.feed(cp);
    }
}
