/**
 * The streaming renderer, in two passes over the same template so nothing is
 * written unless everything can be:
 *
 * 1. `Collector` scans the template and gathers every distinct reference, the
 *    contexts it stands in, and every malformed one. Nothing is resolved yet.
 * 2. After the caller has resolved all of them at once and `check` has found
 *    every (value, context) pair writable, `Renderer` scans the same bytes
 *    again and returns the output chunk by chunk.
 *
 * Both hold only the scanner's small carry between chunks, so memory does not
 * grow with the template. A value is inserted as bytes and never scanned, so
 * a value holding `vault://` is not expanded.
 */
import { VaultError } from '../core/errors.js';
import { ReferenceScanner, formatReference, } from '../core/reference.js';
import { tracker } from './context.js';
import { escapeValue } from './escape.js';
/** Pass 1: what a template references, without resolving anything. */
export class Collector {
    scanner = new ReferenceScanner();
    tracker;
    refs = new Map();
    bad = [];
    constructor(format) {
        this.tracker = tracker(format);
    }
    write(chunk) {
        this.scanner.write(chunk, this);
    }
    end() {
        this.scanner.end(this);
        return { refs: this.refs, malformed: this.bad };
    }
    text(bytes) {
        this.tracker.feed(bytes);
    }
    reference(r) {
        const key = formatReference(r.entry, r.field);
        let w = this.refs.get(key);
        if (w === undefined) {
            w = { entry: r.entry, field: r.field, written: r.written, contexts: new Set() };
            this.refs.set(key, w);
        }
        w.contexts.add(this.tracker.context());
        this.tracker.atom();
    }
    malformed(m) {
        this.bad.push(m);
    }
}
/**
 * Escapes every value for every context it stands in, before anything is
 * written. `values` is keyed like `Collected.refs`.
 */
export function check(collected, values) {
    const out = [];
    for (const [key, w] of collected.refs) {
        const value = values.get(key) ?? Buffer.alloc(0);
        for (const c of w.contexts) {
            const r = escapeValue(value, c);
            if (typeof r === 'string') {
                out.push({ written: w.written, reason: r });
                break;
            }
        }
    }
    return out;
}
/** Pass 2: the template with every reference replaced, chunk by chunk. */
export class Renderer {
    values;
    scanner = new ReferenceScanner();
    tracker;
    escaped = new Map();
    pieces = [];
    constructor(format, values) {
        this.values = values;
        this.tracker = tracker(format);
    }
    /** The output for `chunk`; may be empty when a reference straddles the next one. */
    write(chunk) {
        this.scanner.write(chunk, this);
        return this.flush();
    }
    end() {
        this.scanner.end(this);
        return this.flush();
    }
    flush() {
        const out = Buffer.concat(this.pieces);
        this.pieces = [];
        return out;
    }
    text(bytes) {
        this.tracker.feed(bytes);
        this.pieces.push(bytes);
    }
    /** @throws VaultError VLT-1002 when the template changed since pass 1. */
    reference(r) {
        const key = formatReference(r.entry, r.field);
        const context = this.tracker.context();
        const memo = `${context}\n${key}`;
        let bytes = this.escaped.get(memo);
        if (bytes === undefined) {
            const value = this.values.get(key);
            const e = value === undefined ? null : escapeValue(value, context);
            if (e === null || typeof e === 'string')
                throw changed();
            bytes = e;
            this.escaped.set(memo, bytes);
        }
        this.pieces.push(bytes);
        this.tracker.atom();
    }
    malformed() {
        throw changed();
    }
}
function changed() {
    return new VaultError('VLT-1002', 'The template changed while it was being rendered; the output is incomplete.');
}
