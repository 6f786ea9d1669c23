/**
 * The dashboard's state and the one pure function that changes it: no I/O,
 * the clock passed in. What the vault says arrives as actions (snapshots,
 * audit records, api results); what the owner asks for leaves as a `request`
 * the app carries out against its DashboardApi.
 *
 * Invariant: a value typed into a secret field lives in its form (and in the
 * request made from it) and nowhere else; when the form closes, both go.
 * JavaScript strings cannot be wiped, so "goes" means no longer referenced.
 */
import { VaultError } from '../src/core/errors.js';
import { DEFAULT_FIELD } from '../src/core/names.js';
import { DEFAULT_LIMITS } from '../src/core/policy.js';
import { VIEWS, bindingFor } from './keys.js';
import { Invalid, callOf, done, } from './forms.js';
/** How many audit records the dashboard keeps. */
export const AUDIT_RING = 200;
/** How long a notice stays, in ms: information briefly, errors longer. */
export const NOTICE_MS = { info: 8_000, error: 30_000 };
export function initialState(now) {
    return {
        now,
        loaded: false,
        agents: [],
        entries: [],
        audit: [],
        view: 'agents',
        selected: { agents: 0, entries: 0, audit: 0 },
        form: null,
        confirm: null,
        unlock: null,
        help: false,
        token: null,
        notice: null,
        request: null,
        nextId: 1,
        leaving: false,
    };
}
/** Which part of the key table applies now. */
export function modeOf(s) {
    if (s.token !== null || s.help || s.unlock !== null)
        return 'panel';
    if (s.confirm !== null)
        return 'confirm';
    if (s.form !== null)
        return 'form';
    return s.view;
}
/** The one line an error shows as: `vault-cli: VLT-XXXX: message`. */
export function errorLine(err) {
    if (err instanceof VaultError)
        return err.line();
    const message = err instanceof Error ? err.message : String(err);
    return `vault-cli: ${message.replace(/[\u0000-\u001f\u007f]/g, ' ')}`;
}
export function reduce(s, a, now) {
    const t = { ...s, now };
    switch (a.type) {
        case 'snapshot':
            return snapshot(t, a);
        case 'audit':
            return { ...t, audit: mergeAudit(t.audit, [a.record]) };
        case 'tick':
            return expireNotice(t);
        case 'leave':
            return leave(t);
        case 'key':
            return key(t, a.key);
        case 'result':
            return result(t, a);
        case 'failed':
            return failed(t, a.id, a.line);
        case 'unlockUrl':
            return t.unlock?.id === a.id
                ? { ...t, unlock: { ...t.unlock, url: a.url, status: 'waiting' } }
                : t;
        case 'unlockDone': {
            const text = a.outcome === 'unlocked'
                ? `Agent ${a.agent} is unlocked.`
                : `Agent ${a.agent} was not locked.`;
            const n = notice(t, 'info', text);
            return t.unlock?.id === a.id ? { ...n, unlock: { ...t.unlock, status: a.outcome } } : n;
        }
        case 'enrolDone': {
            const n = notice(t, 'info', `Hardware key ${a.name} is enrolled.`);
            return t.unlock?.id === a.id
                ? { ...n, unlock: { ...t.unlock, agent: a.name, status: 'enrolled' } }
                : n;
        }
        case 'unlockFailed': {
            const n = notice(t, 'error', a.line);
            return t.unlock?.id === a.id
                ? { ...n, unlock: { ...t.unlock, status: 'failed', error: a.line } }
                : n;
        }
    }
}
function notice(s, kind, text) {
    return { ...s, notice: { kind, text, at: s.now } };
}
function expireNotice(s) {
    const n = s.notice;
    if (n === null || s.now - n.at < NOTICE_MS[n.kind])
        return s;
    return { ...s, notice: null };
}
/** Leaving drops whatever was typed: an open form, a pending request, a token on show. */
function leave(s) {
    return {
        ...s,
        leaving: true,
        form: null,
        request: null,
        token: null,
        confirm: null,
        help: false,
    };
}
// --- what the vault says -------------------------------------------------
function snapshot(s, a) {
    let next = s;
    if (a.agents !== undefined) {
        // Revoked agents stay visible (their reads are in the feed) but below the live ones.
        const agents = [...a.agents].sort((x, y) => Number(x.state === 'revoked') - Number(y.state === 'revoked'));
        const index = follow(s.agents, agents, s.selected.agents, (x) => x.name);
        next = { ...next, loaded: true, agents, selected: { ...next.selected, agents: index } };
    }
    if (a.entries !== undefined) {
        const entries = a.entries;
        const index = follow(s.entries, entries, s.selected.entries, (x) => x.name);
        next = { ...next, entries, selected: { ...next.selected, entries: index } };
    }
    if (a.audit !== undefined)
        next = { ...next, audit: mergeAudit(next.audit, a.audit) };
    return next;
}
/** The selection stays on the same name when a list is refreshed; otherwise in range. */
function follow(before, after, index, name) {
    const was = before[index];
    if (was !== undefined) {
        const found = after.findIndex((x) => name(x) === name(was));
        if (found >= 0)
            return found;
    }
    return clamp(index, after.length);
}
function clamp(i, length) {
    return Math.max(0, Math.min(i, length - 1));
}
/** Records by sequence number, each once, the latest AUDIT_RING kept. */
export function mergeAudit(ring, fresh) {
    let out = ring;
    for (const r of fresh) {
        const last = out[out.length - 1];
        if (last === undefined || r.seq > last.seq) {
            out = [...out, r];
            continue;
        }
        if (out.some((x) => x.seq === r.seq))
            continue;
        const at = out.findIndex((x) => x.seq > r.seq);
        out = [...out.slice(0, at), r, ...out.slice(at)];
    }
    return out.length > AUDIT_RING ? out.slice(out.length - AUDIT_RING) : out;
}
// --- keys ----------------------------------------------------------------
function key(s, k) {
    const mode = modeOf(s);
    const binding = bindingFor(k.name, mode);
    if (binding?.action === 'leave')
        return leave(s);
    // The token is shown until the next key, whatever it is; so is the help screen.
    if (s.token !== null)
        return { ...s, token: null };
    if (s.help)
        return { ...s, help: false };
    if (mode === 'panel') {
        // The unlock panel closes; a ceremony under way still reports in the notice line.
        return binding?.action === 'cancel' ? { ...s, unlock: null } : s;
    }
    if (mode === 'confirm')
        return confirmKey(s, binding?.action ?? null);
    if (mode === 'form')
        return formKey(s, binding?.action ?? null, k.text);
    return browseKey(s, binding?.action ?? null);
}
function selectedAgent(s) {
    return s.agents[s.selected.agents];
}
function selectedEntry(s) {
    return s.entries[s.selected.entries];
}
function browseKey(s, action) {
    const act = action === null || !Object.hasOwn(BROWSE, action) ? undefined : BROWSE[action];
    return act === undefined ? s : act(s);
}
/** What each action does while browsing a view (a table; keys.ts binds the keys to them). */
const BROWSE = {
    up: (s) => move(s, -1),
    down: (s) => move(s, 1),
    nextView: (s) => ({ ...s, view: VIEWS[(VIEWS.indexOf(s.view) + 1) % VIEWS.length] ?? 'agents' }),
    help: (s) => ({ ...s, help: true }),
    unlock: (s) => {
        const agent = selectedAgent(s);
        if (agent === undefined)
            return notice(s, 'info', 'No agent selected.');
        if (agent.state !== 'locked')
            return notice(s, 'info', `Agent ${agent.name} is not locked.`);
        return ceremony(s, 'unlock', agent.name);
    },
    enrolKey: (s) => ceremony(s, 'enrol', ''),
    addAgent: (s) => openForm(s, 'addAgent', 'New agent', null, [
        field('name', 'name', 'text'),
        { ...field('kind', 'kind', 'choice', 'ai'), choices: ['ai', 'script'] },
        field('scope', 'scope (entries, comma-separated)', 'list'),
        field('perMinute', 'reads per minute', 'number', String(DEFAULT_LIMITS.perMinute)),
        field('perHour', 'reads per hour', 'number', String(DEFAULT_LIMITS.perHour)),
    ]),
    revokeAgent: (s) => {
        const agent = selectedAgent(s);
        if (agent === undefined || agent.state === 'revoked') {
            return notice(s, 'info', 'No agent to revoke selected.');
        }
        return { ...s, confirm: { kind: 'revokeAgent', target: agent.name, busy: false } };
    },
    scope: (s) => {
        const agent = selectedAgent(s);
        if (agent === undefined)
            return notice(s, 'info', 'No agent selected.');
        return openForm(s, 'scope', `Scope of ${agent.name}`, agent.name, [
            field('add', 'add entries (comma-separated)', 'list'),
            field('rm', 'remove entries (comma-separated)', 'list'),
        ]);
    },
    limits: (s) => {
        const agent = selectedAgent(s);
        if (agent === undefined)
            return notice(s, 'info', 'No agent selected.');
        return openForm(s, 'limits', `Limits of ${agent.name}`, agent.name, [
            field('perMinute', 'reads per minute', 'number', String(agent.limits.perMinute)),
            field('perHour', 'reads per hour', 'number', String(agent.limits.perHour)),
        ]);
    },
    addEntry: (s) => openForm(s, 'addEntry', 'Add an entry or a field', null, [
        field('entry', 'entry', 'text'),
        field('field', 'field', 'text', DEFAULT_FIELD),
        field('value', 'value', 'secret'),
    ]),
    rotate: (s) => {
        const entry = selectedEntry(s);
        if (entry === undefined)
            return notice(s, 'info', 'No entry selected.');
        const form = openForm(s, 'rotate', `Rotate a field of ${entry.name}`, null, [
            field('entry', 'entry', 'text', entry.name),
            field('field', 'field', 'text', entry.fields[0]?.name ?? DEFAULT_FIELD),
            field('value', 'new value', 'secret'),
        ]);
        return form.form === null ? form : { ...form, form: { ...form.form, focus: 2 } };
    },
    removeEntry: (s) => {
        const entry = selectedEntry(s);
        if (entry === undefined)
            return notice(s, 'info', 'No entry selected.');
        return { ...s, confirm: { kind: 'removeEntry', target: entry.name, busy: false } };
    },
};
/** A hardware-key ceremony starting: an agent's unlock, or a key's enrolment (agent ''). */
function ceremony(s, kind, agent) {
    return {
        ...s,
        nextId: s.nextId + 1,
        unlock: { id: s.nextId, kind, agent, url: null, status: 'starting', error: null },
    };
}
function move(s, by) {
    const sel = s.selected;
    if (s.view === 'agents') {
        return { ...s, selected: { ...sel, agents: clamp(sel.agents + by, s.agents.length) } };
    }
    if (s.view === 'entries') {
        return { ...s, selected: { ...sel, entries: clamp(sel.entries + by, s.entries.length) } };
    }
    // The audit list scrolls: up goes back in time.
    return { ...s, selected: { ...sel, audit: clamp(sel.audit - by, s.audit.length) } };
}
function field(id, label, kind, value = '') {
    return { id, label, kind, value };
}
function openForm(s, kind, title, subject, fields) {
    return { ...s, form: { kind, title, subject, fields, focus: 0, busy: false } };
}
function confirmKey(s, action) {
    const c = s.confirm;
    if (c === null || c.busy)
        return s;
    if (action === 'cancel')
        return { ...s, confirm: null };
    if (action !== 'confirm')
        return s;
    const call = c.kind === 'removeEntry'
        ? { op: 'removeEntry', entry: c.target }
        : { op: 'revokeAgent', name: c.target };
    return { ...s, confirm: { ...c, busy: true }, ...request(s, call) };
}
function request(s, call) {
    return { request: { id: s.nextId, call }, nextId: s.nextId + 1 };
}
/** Printable text only: a pasted control character never reaches a field. */
function printable(text) {
    return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}
function formKey(s, action, text) {
    const f = s.form;
    if (f === null || f.busy)
        return s;
    const current = f.fields[f.focus];
    if (current === undefined)
        return s;
    const setValue = (value) => ({
        ...s,
        form: { ...f, fields: f.fields.map((x, i) => (i === f.focus ? { ...x, value } : x)) },
    });
    const focus = (by) => ({
        ...s,
        form: { ...f, focus: (f.focus + by + f.fields.length) % f.fields.length },
    });
    switch (action) {
        case 'cancel':
            return { ...s, form: null };
        case 'nextField':
            return focus(1);
        case 'prevField':
            return focus(-1);
        case 'submit':
            return f.focus < f.fields.length - 1 ? focus(1) : submit(s, f);
        case 'erase':
            return setValue(Array.from(current.value).slice(0, -1).join(''));
        case 'clearField':
            return setValue('');
        case 'cycle': {
            const choices = current.choices ?? [];
            if (choices.length === 0)
                return s;
            return setValue(choices[(choices.indexOf(current.value) + 1) % choices.length] ?? '');
        }
        case null:
            break;
        default:
            return s;
    }
    const typed = printable(text);
    if (typed === '')
        return s;
    switch (current.kind) {
        case 'number':
            return /^[0-9]+$/.test(typed) ? setValue((current.value + typed).slice(0, 9)) : s;
        case 'choice': {
            const pick = (current.choices ?? []).find((c) => c.startsWith(typed.toLowerCase()));
            return pick === undefined ? s : setValue(pick);
        }
        default:
            return setValue(current.value + typed);
    }
}
function submit(s, f) {
    let call;
    try {
        call = callOf(f);
    }
    catch (err) {
        const line = err instanceof Invalid ? new VaultError('VLT-1002', err.message).line() : errorLine(err);
        return notice(s, 'error', line);
    }
    return { ...s, form: { ...f, busy: true }, ...request(s, call) };
}
// --- what the vault answered ---------------------------------------------
function result(s, a) {
    const r = s.request;
    if (r === null || r.id !== a.id)
        return s;
    const closed = notice({ ...s, request: null, form: null, confirm: null }, 'info', done(r.call, a.version));
    if (r.call.op === 'addAgent' && a.token !== undefined) {
        return { ...closed, token: { agent: r.call.name, token: a.token } };
    }
    return closed;
}
function failed(s, id, line) {
    if (id === null)
        return notice(s, 'error', line);
    const r = s.request;
    if (r === null || r.id !== id)
        return s;
    // A form stays open to be corrected; a confirmation has nothing to correct.
    const form = s.form === null ? null : { ...s.form, busy: false };
    return notice({ ...s, request: null, form, confirm: null }, 'error', line);
}
