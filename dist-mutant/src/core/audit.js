/**
 * The audit event: metadata only, never a value, token or passphrase. The host
 * turns an event into a sealed, hash-chained record; `vault-cli audit` and the
 * dashboard show it with these formatters.
 */
import { oneLine } from './errors.js';
import { showableJson, unshowableIn } from './names.js';
export const AGENT_ACTIONS = [
    'read',
    'ai_read',
    'fill',
    'denied',
    'limited',
    'locked',
    // An attempt to send a value where it may not go, counted as a violation (docs/proxy.md).
    'exfil',
    // The host stored the refresh token an OAuth endpoint rotated during this agent's fill (oauth.ts).
    'oauth_rotate',
    // A signature made in the host with an SSH private key it never releases (docs/ssh.md).
    'ssh_sign',
];
export const OWNER_ACTIONS = [
    'vault_create',
    'vault_passwd',
    'vault_migrate',
    'vault_rekey',
    'entry_add',
    'field_add',
    'rotate',
    'entry_rm',
    'entry_hosts',
    'reveal',
    'agent_add',
    'agent_scope',
    'agent_limits',
    'agent_caveats',
    'agent_lock',
    'agent_revoke',
    'unlocked',
    'unlock_failed',
    'passphrase_failed',
    'key_add',
    'key_rm',
    'session_start',
    'session_end',
    'vault_backup',
    'vault_check',
    'vault_restore',
    'vault_migrate',
    'audit_archive',
    'owner_unlock',
    'owner_lock',
    'sweep',
    'exposed',
];
/** The owner acts under this actor name; agents act as `cli:<name>`. */
export const OWNER_ACTOR = 'owner';
export const UNKNOWN_ACTOR = 'cli:?';
export function agentActor(name) {
    return `cli:${name}`;
}
/**
 * The one builder of audit events, for the agent path and the owner's
 * operations alike: what the detail leaves out is null. The clock is the
 * caller's (`at`), so this stays pure.
 */
export function auditEvent(at, action, actor, source, outcome, detail = {}) {
    return {
        at,
        action,
        actor,
        source,
        outcome,
        entryId: detail.entryId ?? null,
        entry: detail.entry ?? null,
        field: detail.field ?? null,
        host: detail.host ?? null,
        subject: detail.subject ?? null,
    };
}
const pad = (n, w = 2) => String(n).padStart(w, '0');
/** `YYYY-MM-DD HH:MM:SS` in the local time zone. */
export function formatTime(ms) {
    const d = new Date(ms);
    return (`${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
        `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`);
}
/**
 * A message's UTC ISO times (the host writes a retry time so, for logs and
 * the proxy's replies) in local time as `formatTime` prints, rounded up to
 * the second: retrying at the printed second is never early.
 */
export function localTimes(message) {
    return message.replace(/\b(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/g, (iso) => formatTime(Math.ceil(Date.parse(iso) / 1000) * 1000));
}
/** Column widths for a listing that grows as it prints (`audit --follow`). */
export const FOLLOW_WIDTHS = [19, 12, 24, 16];
/**
 * The listing: TIME ACTION ENTRY ACTOR ABOUT, columns padded to the widest
 * cell (or at least `minWidths`). ABOUT is whom (or what) an owner action was
 * about, the record's subject: `agent_add` of which agent, `unlocked` which.
 * `header` false prints the rows alone.
 */
export function formatAuditTable(records, minWidths = [], header = true) {
    const rows = [
        ...(header ? [['TIME', 'ACTION', 'ENTRY', 'ACTOR', 'ABOUT']] : []),
        ...records.map((r) => [
            formatTime(r.at),
            r.action,
            displayEntry(r.entry),
            r.actor,
            // The last column: spaces need no quotes there, control characters are escaped.
            r.subject === null ? '' : oneLine(r.subject),
        ]),
    ];
    if (rows.length === 0)
        return '';
    const widths = [0, 1, 2, 3].map((i) => Math.max(minWidths[i] ?? 0, ...rows.map((row) => (row[i] ?? '').length)));
    return rows
        .map((row) => row
        .map((cell, i) => (i < 4 ? cell.padEnd(widths[i] ?? 0) : cell))
        .join('  ')
        .trimEnd())
        .join('\n')
        .concat('\n');
}
/**
 * Entry names are free text, and in a refusal's record the agent chose them:
 * quoted when they hold spaces, quotes, a `/` (so `"1p/GitHub"/password` reads
 * as one entry and its field, issue 38) or any character a terminal would act
 * on or that would make the line read otherwise (C0, C1 such as U+009B, CSI
 * on some terminals; bidi overrides, zero-width characters), those escaped.
 */
export function displayEntry(name) {
    if (name === null)
        return '-';
    if (/^[^\s"/]+$/.test(name) && unshowableIn(name) === null)
        return name;
    return showableJson(JSON.stringify(name));
}
export function matchesFilter(r, f) {
    if (f.afterSeq !== undefined && r.seq <= f.afterSeq)
        return false;
    if (f.since !== undefined && r.at < f.since)
        return false;
    if (f.agent !== undefined && r.actor !== agentActor(f.agent) && r.subject !== f.agent)
        return false;
    return true;
}
const UNITS = {
    s: 1_000,
    m: 60_000,
    h: 3_600_000,
    d: 86_400_000,
};
/**
 * `--since`: a duration back from `now` (`90s`, `10m`, `2h`, `7d`) or a date
 * and time (`2026-11-22`, `2026-11-22 14:00`, any ISO 8601 form; local time
 * unless it names a zone). Null when the text is neither.
 */
export function parseSince(text, now) {
    const rel = /^([0-9]{1,9})([smhd])$/.exec(text.trim());
    if (rel !== null)
        return now - Number(rel[1]) * UNITS[rel[2]];
    const iso = /^\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d+)?)?)?(Z|[+-]\d\d:?\d\d)?$/;
    const t = text.trim();
    if (!iso.test(t))
        return null;
    // A bare date is UTC to Date.parse; make it local midnight like the rest.
    const ms = Date.parse(/^\d{4}-\d\d-\d\d$/.test(t) ? `${t}T00:00` : t.replace(' ', 'T'));
    return Number.isNaN(ms) ? null : ms;
}
