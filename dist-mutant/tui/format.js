/**
 * How the dashboard writes what it shows: cells of a fixed width, agent
 * states with a text marker (so they read without colour), usage against
 * limits, and which audit records are alarms. Every name shown passes
 * through `plain`, so a name cannot move the cursor or restyle the screen.
 */
import { displayEntry, formatTime } from '../src/core/audit.js';
import { oneLine } from '../src/core/errors.js';
/** Control and invisible characters (bidi overrides, zero-width) shown escaped (oneLine). */
export function plain(text) {
    return oneLine(text);
}
/** `text` cut or padded to exactly `width` columns (cut text ends in `…`). */
export function cell(text, width) {
    const chars = Array.from(text);
    if (chars.length > width)
        return chars.slice(0, Math.max(0, width - 1)).join('') + '…';
    return text + ' '.repeat(width - chars.length);
}
/** An agent's state as the table shows it: marker and words carry it without colour. */
export function stateLook(state) {
    switch (state) {
        case 'active':
            return { marker: '●', text: 'active', tone: 'ok' };
        case 'violation':
            return { marker: '▲', text: 'violation recorded', tone: 'warn' };
        case 'locked':
            return { marker: '■', text: 'LOCKED', tone: 'alarm' };
        case 'revoked':
            return { marker: '×', text: 'revoked', tone: 'muted' };
        case 'altered':
            return { marker: '!', text: 'ALTERED outside vault-cli', tone: 'alarm' };
    }
}
/** Distinct reads against a limit, `2/3`; `full` when the window has no room left. */
export function usageCell(used, limit) {
    return { text: `${used}/${limit}`, full: used >= limit };
}
/** Alarms in the audit feed: violations and lockdowns. */
export function alarmOf(r) {
    if (r.action === 'limited' || r.action === 'exfil' || r.outcome === 'VLT-2042')
        return 'limited';
    if (r.action === 'locked' || r.action === 'agent_lock' || r.outcome === 'VLT-2043') {
        return 'locked';
    }
    return null;
}
/** The feed's time: month, day and time of day, local. */
export function feedTime(at) {
    return formatTime(at).slice(5);
}
export function entryName(name) {
    return plain(displayEntry(name));
}
/** The entry and field a record is about: `github/password`, or `-`. */
export function recordTarget(r) {
    if (r.entry === null)
        return r.subject === null ? '-' : plain(r.subject);
    return r.field === null ? entryName(r.entry) : `${entryName(r.entry)}/${plain(r.field)}`;
}
/** The rows of a list to show so that `selected` is visible. */
export function windowOf(length, selected, rows) {
    if (length <= rows)
        return [0, length];
    const start = Math.max(0, Math.min(selected - Math.floor(rows / 2), length - rows));
    return [start, start + rows];
}
