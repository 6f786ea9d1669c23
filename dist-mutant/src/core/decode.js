/**
 * Decoders for request bodies: each takes any JSON value and returns the typed
 * value or throws VaultError VLT-1001 (`Bad request: ...`), never anything
 * else. A decoder also carries, as a type only, what a caller may send
 * (`Wire`), so the client's request types come from the same definition the
 * host checks against (protocol.ts). Hand-written rather than valibot: the
 * client of `get` loads none of this, and the host needs a dozen shapes.
 * Pure: no I/O.
 */
import { VaultError } from './errors.js';
export function bad(what) {
    return new VaultError('VLT-1001', `Bad request: ${what}.`);
}
export const str = (v, key) => {
    if (typeof v !== 'string')
        throw bad(`${key} must be a string`);
    return v;
};
export function optional(d) {
    return (v, key) => (v === undefined ? undefined : d(v, key));
}
/** A list of strings; absent (or null) is the empty list. */
export const strList = (v, key) => {
    const list = v ?? [];
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
        throw bad(`${key} must be a list`);
    }
    return list;
};
/** A positive whole number, or absent. */
export const optCount = (v, key) => {
    if (v === undefined)
        return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
        throw bad(`${key} must be a count`);
    return v;
};
/** A whole number (any sign), or absent. */
export const optWhole = (v, key) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v))) {
        throw bad(`${key} must be a whole number`);
    }
    return v;
};
/** A finite number; the message names the key only. */
export const finite = (v, key) => {
    if (typeof v !== 'number' || !Number.isFinite(v))
        throw bad(key);
    return v;
};
/** True only when the client sent `true`; anything else is false. */
export const flag = (v) => v === true;
/** Passed on as is, for the callee to check (a WebAuthn result). */
export const anything = (v) => v;
/** One of a few strings: not a string says so, another string names the key only. */
export function oneOf(values) {
    return (v, key) => {
        const s = str(v, key);
        if (!values.includes(s))
            throw bad(key);
        return s;
    };
}
function ownField(o, key) {
    return Object.hasOwn(o, key) ? o[key] : undefined;
}
/**
 * An object of `fields`, decoded in their order (the first bad one is
 * reported); keys not named are ignored. `loose`: a value that is not an
 * object reads as `{}` (a nested part whose fields all have defaults).
 */
export function object(fields, opts = {}) {
    const d = (v, key) => {
        const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
        if (!isObject && !opts.loose)
            throw bad(key);
        const o = isObject ? v : {};
        const out = {};
        for (const [k, field] of Object.entries(fields))
            out[k] = field(ownField(o, k), k);
        return out;
    };
    return Object.assign(d, { fields });
}
/** A list of `item`, at most `max` long (`tooMany` says why, with its own code). */
export function list(item, opts) {
    return (v) => {
        if (!Array.isArray(v) || v.length < opts.min)
            throw bad(opts.what);
        if (v.length > opts.max)
            throw opts.tooMany(v.length);
        return v.map((x, i) => item(x, String(i)));
    };
}
